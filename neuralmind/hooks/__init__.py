"""Agent hooks: `neuralmind hook EVENT` and `neuralmind init` for coding agents.

One small module per agent (`claude.py`, `gemini.py`) says how that agent calls a
hook (its stdin JSON, its stdout contract, its settings file); `client.py` answers one
hook through the warm server or the on-disk index; `setup.py` installs and removes
NeuralMind in a project. Behaviour stays in the engine (`engine/agent_context.py`).
"""
