"""Qt item models over the session's domain values (Decimal inside, text for the views)."""
