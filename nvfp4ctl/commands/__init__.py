"""One module per command: parse options, call core modules, render through the console."""
