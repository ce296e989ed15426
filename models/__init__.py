"""The shared GPT of the course: model, tokenizer, corpus, trainer and checkpoint."""
