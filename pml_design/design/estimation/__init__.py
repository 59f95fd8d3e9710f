"""The estimation design; see api."""
