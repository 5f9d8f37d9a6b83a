"""Small reusable widgets the panels are built from."""
