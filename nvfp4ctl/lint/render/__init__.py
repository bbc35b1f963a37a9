"""One renderer per output format; each turns a LintReport into text."""
