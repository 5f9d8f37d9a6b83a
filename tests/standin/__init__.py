"""A stand-in service that reads the seed's open points the other fair way (see ``ledger``)."""
