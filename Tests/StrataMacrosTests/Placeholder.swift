// Macro expansion tests live here.
