"""The command line: parse arguments, call the core, render human or JSON output."""
