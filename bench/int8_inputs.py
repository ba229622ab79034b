#!/usr/bin/python3
"""Inputs for bench/int8.sh (dev-time): N float32 tensors of SHAPE, each as
DIR/KKK/input_0.pb and DIR/KKK.bin (raw, for onnxruntime-node), from a
fixed seed.

    /usr/bin/python3 bench/int8_inputs.py DIR N SEED d0,d1,... [noise|images]

noise (the default): standard-normal values. images (SHAPE 1,3,H,W): views
of the two photos that Debian's python3-sklearn ships
(sklearn.datasets.load_sample_images: china.jpg, flower.jpg; no download),
each a random crop (8% to 100% of the photo's area, aspect ratio 3/4 to
4/3, as torchvision's RandomResizedCrop), resized to HxW (bilinear), flipped
left-right half the time, with brightness, contrast and saturation jitter
of +-20%, then normalized as ImageNet (mean 0.485 0.456 0.406, std 0.229
0.224 0.225). Different seeds draw different crops: bench/int8.sh
calibrates on one seed and evaluates on another.

With --round, copies the inputs of IN_DIR to OUT_DIR rounded to the grid of
the QDQ model's input (its first QuantizeLinear of the graph input): what
the float model sees when only its input is quantized.

    /usr/bin/python3 bench/int8_inputs.py --round QDQ.onnx IN_DIR OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import numpy_helper


def round_inputs(model, src, out):
    import onnx
    m = onnx.load(model)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    x = m.graph.input[0].name
    q = [n for n in m.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == x][0]
    s, z = float(inits[q.input[1]]), float(inits[q.input[2]])
    lo, hi = (0, 255) if inits[q.input[2]].dtype == np.uint8 else (-128, 127)
    for k in sorted(os.listdir(src)):
        p = os.path.join(src, k, "input_0.pb")
        if not os.path.isfile(p):
            continue
        v = numpy_helper.to_array(onnx.load_tensor(p))
        r = ((np.clip(np.round(v / np.float32(s)) + z, lo, hi) - z) * s).astype(np.float32)
        os.makedirs(os.path.join(out, k), exist_ok=True)
        with open(os.path.join(out, k, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r).SerializeToString())


def image_views(n, seed, shape):
    from PIL import Image
    from sklearn.datasets import load_sample_images
    photos = [Image.fromarray(a) for a in load_sample_images().images]
    rng = np.random.RandomState(seed)
    h, w = shape[2], shape[3]
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    for _ in range(n):
        im = photos[rng.randint(len(photos))]
        iw, ih = im.size
        while True:
            area = iw * ih * rng.uniform(0.08, 1.0)
            ratio = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
            cw, ch = int(round(np.sqrt(area * ratio))), int(round(np.sqrt(area / ratio)))
            if 0 < cw <= iw and 0 < ch <= ih:
                break
        x0, y0 = rng.randint(iw - cw + 1), rng.randint(ih - ch + 1)
        v = im.crop((x0, y0, x0 + cw, y0 + ch)).resize((w, h), Image.BILINEAR)
        a = np.asarray(v, np.float32) / 255.0
        if rng.rand() < 0.5:
            a = a[:, ::-1]
        a = a * rng.uniform(0.8, 1.2)
        a = (a - a.mean()) * rng.uniform(0.8, 1.2) + a.mean()
        grey = a.mean(axis=2, keepdims=True)
        a = np.clip((a - grey) * rng.uniform(0.8, 1.2) + grey, 0, 1)
        a = (a - mean) / std
        yield np.ascontiguousarray(a.transpose(2, 0, 1)[None]).astype(np.float32).reshape(shape)


def noise(n, seed, shape):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        yield rng.randn(*shape).astype(np.float32)


def main():
    if sys.argv[1] == "--round":
        round_inputs(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    out, n, seed, shape = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(d) for d in sys.argv[4].split(",")]
    kind = sys.argv[5] if len(sys.argv) > 5 else "noise"
    make = {"noise": noise, "images": image_views}[kind]
    for k, x in enumerate(make(n, seed, shape)):
        d = os.path.join(out, "%03d" % k)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
        x.tofile(d + ".bin")


if __name__ == "__main__":
    main()
