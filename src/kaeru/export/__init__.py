"""Archives: the lossless `amg` interchange format, the Obsidian-friendly markdown folder, and copying a
vault between backends. An edge layer: it reads and writes files; the formats themselves are pure."""
