"""The box: the worker that runs a learner's code (worker.py, forked by the judge), what confines it
(sandbox.py: namespaces and a private root; seccomp.py; landlock.py) and the plain-data wire it answers on."""
