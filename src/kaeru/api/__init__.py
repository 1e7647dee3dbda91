"""The wire contract: envelopes, NodeData and the JSON Schemas every tool declares."""
