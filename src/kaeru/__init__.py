"""kaeru-memory: persistent, scoped, typed-graph memory for LLM agents, served over MCP."""

__version__ = "0.1.0"
API_VERSION = 1
