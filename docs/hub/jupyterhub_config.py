# JupyterHub on one machine, for a class using the Attention Tutor (docs/hub/README.md).
#
#     pip install jupyterhub "attention-tutor[hub]" jupyterhub-systemdspawner jupyterhub-ltiauthenticator \
#         jupyterhub-idle-culler
#     npm install -g configurable-http-proxy
#     jupyterhub -f jupyterhub_config.py          # as root (SystemdSpawner starts each learner's unit)
#
# Each learner logs in (from the LMS, below), gets a single-user server of their own, and finds the tutor
# at https://HUB/user/NAME/tutor/. tests/test_hub.py loads this file as it is and overrides only what a
# test machine cannot have; the lines it overrides are marked "untested here".
import sys

c = get_config()  # noqa: F821 (JupyterHub's config loader provides it)

# --- where the hub is ------------------------------------------------------------------------------
c.JupyterHub.bind_url = "http://127.0.0.1:8000"  # untested here: a TLS proxy (nginx, Caddy) in front
c.JupyterHub.public_url = "https://hub.example.org"  # untested here (the test's own address instead)
# the public origin: each server gets it as JUPYTERHUB_PUBLIC_URL, and the tutor's websocket takes only it

# --- the learner's server opens on the tutor --------------------------------------------------------
c.Spawner.default_url = "/tutor/"  # the landing page; JupyterLab, where installed, stays at /lab
c.Spawner.http_timeout = 60
# Each learner's progress and best grades reach the course folder the instructor reads with
# `python -m tutor class /srv/tutor-exchange` (its class.json and learners/, docs/hub/README.md).
c.Spawner.environment = {"TUTOR_EXCHANGE": "/srv/tutor-exchange"}

# --- one server per learner, bounded: SystemdSpawner ------------------------------------------------
# untested here (no systemd in the test container): the five lines below
c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
c.SystemdSpawner.dynamic_users = True  # a fresh uid per learner, no system accounts; home in /var/lib/private
c.SystemdSpawner.mem_limit = "2G"  # the server, the tutor and every grade and run it starts
c.SystemdSpawner.cpu_limit = 1.0
c.SystemdSpawner.isolate_tmp = True
# (LocalProcessSpawner instead needs a system user per learner and sets no limits; the tutor then bounds
# each app it starts with its own cgroups or rlimits, as `serve` does.)

# --- logins from the LMS: LTI 1.3 (Canvas shown; Moodle below) --------------------------------------
# untested here (it needs the LMS): the six lines below
c.JupyterHub.authenticator_class = "ltiauthenticator.lti13.auth.LTI13Authenticator"
c.LTI13Authenticator.issuer = "https://canvas.instructure.com"
c.LTI13Authenticator.authorize_url = "https://sso.canvaslms.com/api/lti/authorize_redirect"
c.LTI13Authenticator.jwks_endpoint = "https://sso.canvaslms.com/api/lti/security/jwks"
c.LTI13Authenticator.client_id = ["10000000000001"]  # the developer key's id, from Canvas
c.LTI13Authenticator.username_key = "sub"  # the LMS's opaque user id: a name the tutor's exchange can use
# Moodle: issuer "https://moodle.example.org", authorize_url ".../mod/lti/auth.php",
# jwks_endpoint ".../mod/lti/certs.php", client_id from the tool's registration.
c.Authenticator.allow_all = True  # whoever the LMS launches may log in

# --- idle servers end: jupyterhub-idle-culler ------------------------------------------------------
# Proxied tutor traffic counts as the server's activity; the tutor itself ends a session after 30
# minutes without a key, so a forgotten tab stops counting.
c.JupyterHub.services = [
    {"name": "idle-culler", "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600"]}
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
