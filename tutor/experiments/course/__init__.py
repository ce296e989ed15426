"""The course's experiments, one module per family, each a function `params -> Result` the registry names
(registry.py: "rope:run_rope_frequencies" is course/rope.py's function): attention's structure and
scaling, positions and RoPE/ALiBi, context extension, training and fine-tuning runs, writing with the
model; course_text loads the Tang text they train on."""
