"""Live experiments on the course GPT: a registry of parameterised functions `params -> Result`.

Importing this package (and the registry) does not import torch; see registry.py, runner.py.
"""
