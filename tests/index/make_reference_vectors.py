"""Compute the reference vectors in reference_vectors.json (run by hand, never by the suite).

Uses the fp32 sentence-transformers all-MiniLM-L6-v2 checkpoint (model.safetensors,
config.json, tokenizer.json) through torch + transformers in a scratch venv:

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 transformers safetensors
    /tmp/refvenv/bin/python tests/index/make_reference_vectors.py /tmp/tok/fp32

Pooling is done here as sentence-transformers does it: mean over the tokens the
attention mask keeps, then L2 normalisation; truncation at 256 tokens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SENTENCES = [
    "How does a Session persist cookies across requests?",
    "def get_auth_token(user: User) -> str:\n    \"\"\"Return the bearer token of a user.\"\"\"",
    "class CaseInsensitiveDict(MutableMapping): a dictionary whose keys ignore case",
    "src/requests/adapters.py HTTPAdapter.send method: send a PreparedRequest object",
    "The quick brown fox jumps over the lazy dog.",
    "retry with exponential backoff when the connection pool is exhausted " * 12,
]


def main() -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    model_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tok/fp32")
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    vectors = []
    with torch.no_grad():
        for s in SENTENCES:
            enc = tokenizer([s], truncation=True, max_length=256, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).float()
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vec = torch.nn.functional.normalize(mean, p=2, dim=1)[0]
            vectors.append([round(float(x), 7) for x in vec])
    out = {
        "how": ("sentence-transformers/all-MiniLM-L6-v2 fp32 (model.safetensors) run by "
                f"torch {torch.__version__} + transformers; mean pooling with the attention "
                "mask, L2 normalised, truncation 256; script: tests/index/make_reference_vectors.py"),
        "sentences": SENTENCES,
        "vectors": vectors,
    }
    target = Path(__file__).with_name("reference_vectors.json")
    target.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(vectors)} vectors to {target}")


if __name__ == "__main__":
    main()
