"""m1nd: a git-native mailbox for the field reports that coding agents write."""

__version__ = "0.1.0"
