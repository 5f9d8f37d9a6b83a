"""The Qt desktop terminal. Binds to ``app.services`` through ``bridge.SessionBridge``."""
