"""Export the packaged sentence-transformers model to ONNX, once, in its own process.

    python -m app.adapters.onnx_export MODEL_DIR OUT.onnx [--variant fp32|int8|int8-ffn-fp32]

The serving process never imports torch with the ONNX backend: `app/adapters/onnx_embeddings.py` runs this
module as a child process the first time a data dir needs the model, and caches what it writes. The export
reads only the local model folder (no download). Only the transformer is exported; mean pooling and
normalisation stay in numpy, where they are the few lines sentence-transformers runs.

Variants (the quantised ones are dynamic: int8 weights, activations quantised per call):
- fp32: the model as it is;
- int8: every MatMul quantised;
- int8-ffn-fp32: int8 except the feed-forward output projections, whose inputs (after GELU) have the
  widest range and lose the most to 8 bits.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

VARIANTS = ("fp32", "int8", "int8-ffn-fp32")
# what the export writes changes with this: a new recipe gets a new cache entry, never an old file
RECIPE = "minilm-onnx-1"
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_fp32(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class LastHiddenState(torch.nn.Module):
        """transformers 5 models take their inputs by keyword; the exporter passes them by position."""

        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = torch.ones(1, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(
            LastHiddenState(model),
            (sample, sample, torch.zeros_like(sample)),
            str(out),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def quantize(fp32: Path, out: Path, variant: str) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    exclude: list[str] = []
    if variant == "int8-ffn-fp32":
        graph = onnx.load(str(fp32), load_external_data=False).graph
        # the second dense layer of each feed-forward block: /encoder/layer.N/output/dense/MatMul
        exclude = [n.name for n in graph.node if n.op_type == "MatMul" and "/output/dense/" in n.name]
        exclude = [n for n in exclude if "/attention/" not in n]
        if not exclude:
            raise RuntimeError("no feed-forward output projections found in the exported graph")
    quantize_dynamic(
        str(fp32), str(out), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"], nodes_to_exclude=exclude
    )


def export(model_dir: Path, out: Path, variant: str) -> None:
    """Write the `variant` ONNX model of `model_dir` to `out` (through a temporary file: all or nothing)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown ONNX variant {variant!r}: one of {', '.join(VARIANTS)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-") as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        export_fp32(model_dir, fp32)
        final = fp32
        if variant != "fp32":
            final = Path(tmp) / f"{variant}.onnx"
            quantize(fp32, final, variant)
        final.replace(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--variant", choices=VARIANTS, default="fp32")
    args = parser.parse_args(argv)
    if not (args.model_dir / "config.json").is_file():
        print(f"not a model folder (no config.json): {args.model_dir}", file=sys.stderr)
        return 2
    export(args.model_dir, args.out, args.variant)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
