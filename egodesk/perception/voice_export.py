"""Export the Resemblyzer voice encoder (weights from its PyPI wheel) to the ONNX file the diarizer runs.

Run once by `./setup.sh` (`egodesk models install`), in the throwaway torch environment the tagger's
export uses: torch is needed to read the checkpoint and trace the graph, never at run time. The network
is rebuilt here from the checkpoint's own tensor shapes (3-layer LSTM over 40 mel bands, 256 hidden,
then Linear 256 -> 256, ReLU, L2 norm: the GE2E speaker encoder) and loaded strictly, so a checkpoint
that does not match fails instead of exporting random weights.

The graph takes a float32 batch of mel power spectrograms (batch, frames, 40) and returns the
L2-normalised 256-d voice embedding of each (the last layer's final hidden state).

    python -m egodesk.perception.voice_export PRETRAINED.pt OUT.onnx
"""

from __future__ import annotations

import sys

MEL_BANDS = 40
HIDDEN = 256
LAYERS = 3


def export(weights: str, out: str) -> None:
    import torch

    checkpoint = torch.load(weights, map_location="cpu")
    # The checkpoint also holds the GE2E loss's similarity scale and bias (training only): drop them.
    state = {k: v for k, v in checkpoint["model_state"].items() if k.startswith(("lstm.", "linear."))}

    class VoiceEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(MEL_BANDS, HIDDEN, LAYERS, batch_first=True)
            self.linear = torch.nn.Linear(HIDDEN, HIDDEN)

        def forward(self, mels):
            _, (hidden, _) = self.lstm(mels)
            raw = torch.relu(self.linear(hidden[-1]))
            return raw / torch.clamp(torch.linalg.vector_norm(raw, dim=1, keepdim=True), min=1e-8)

    net = VoiceEncoder()
    net.load_state_dict(state, strict=True)
    net.eval()
    sample = torch.zeros(2, 160, MEL_BANDS)
    with torch.no_grad():
        torch.onnx.export(
            net,
            (sample,),
            out,
            input_names=["mels"],
            output_names=["embeddings"],
            dynamic_axes={"mels": {0: "batch", 1: "frames"}, "embeddings": {0: "batch"}},
            opset_version=17,
            dynamo=False,
            # No folding: every weight stays a byte copy of the checkpoint, so the file's sha256 is the
            # same on every CPU (see tagger_export); ONNX Runtime folds what it can when it loads.
            training=torch.onnx.TrainingMode.PRESERVE,
            do_constant_folding=False,
        )


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    export(*argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
