"""Live experiments on the course GPT: a registry of parameterised functions `params -> Result`.

Here, the framework: the registry and parameters, runs in a child process (runner, worker), long jobs
and their pool (jobs, pool), results and how they are drawn (result, render, plain), the shipped models
loaded once (cache). The experiments themselves are in course/.

Importing this package (and the registry) does not import torch; see registry.py, runner.py.
"""
