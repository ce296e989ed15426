"""The app's screens: one file per screen."""
