"""Text buffer with undo/redo. TODO: implement TextBuffer (see the task description)."""
