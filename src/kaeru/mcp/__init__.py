"""The MCP edge: the only package that imports the `mcp` SDK."""
