"""Independent references for the vision ops, written from TVM's hybrid / TFLite / Darknet
formulations rather than from the ops' own references: quadratic suppression loops over every
earlier box, Python's sorted() for the stable orders, element-by-element pooling in float64.
"""
import math

import numpy as np


def _iou(a, b):
    """Overlap of two boxes given by any two opposite corners, float64."""
    al, ar = sorted((float(a[0]), float(a[2])))
    at, ab = sorted((float(a[1]), float(a[3])))
    bl, br = sorted((float(b[0]), float(b[2])))
    bt, bb = sorted((float(b[1]), float(b[3])))
    inter = max(0.0, min(ar, br) - max(al, bl)) * max(0.0, min(ab, bb) - max(at, bt))
    union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - inter
    return 0.0 if union <= 0 else inter / union


def get_valid_counts(data, thr, a):
    b, n, k = data.shape
    counts, out, idx = [], np.full(data.shape, -1.0), np.full((b, n), -1)
    for i in range(b):
        c = 0
        for j in range(n):
            if data[i, j, a.score_index] > float(thr) and (a.id_index < 0 or data[i, j, a.id_index] >= 0):
                out[i, c], idx[i, c] = data[i, j], j
                c += 1
        counts.append(c)
    return np.array(counts), out, idx


def non_max_suppression(data, valid_count, indices, max_out, thr, a):
    """TVM's hybrid_nms: each box against every earlier box still standing."""
    b, n, k = data.shape
    thr, max_out = float(thr), int(max_out)
    results = []
    for i in range(b):
        vc = min(max(int(valid_count[i]), 0), n)
        out, box = np.full((n, k), -1.0), np.full(n, -1)
        if thr > 0:
            order = sorted(range(vc), key=lambda j: -float(data[i, j, a.score_index]))
            keep = a.top_k if 0 < a.top_k < vc else vc
            for j in range(keep):
                out[j], box[j] = data[i, order[j]], order[j]
            valid = 0
            for j in range(vc):
                if valid == max_out:
                    out[j], box[j] = -1.0, -1
                elif out[j, a.score_index] > 0:
                    alive = True
                    for p in range(j):
                        same = a.force_suppress or a.id_index < 0 or out[j, a.id_index] == out[p, a.id_index]
                        if (out[p, a.score_index] > 0 and (a.id_index < 0 or out[p, a.id_index] >= 0) and same
                                and _iou(out[j, a.coord_start:], out[p, a.coord_start:]) >= thr):
                            alive = False
                    if alive:
                        valid += 1
                    else:
                        out[j], box[j] = -1.0, -1
        else:
            out[:vc], box[:vc] = data[i, :vc], np.arange(vc)
        if a.return_indices:
            box = np.array([indices[i, v] if j < vc and v >= 0 else v for j, v in enumerate(box)])
        results.append((out, box))
    if a.return_indices:
        packed = np.full((b, n), -1)
        counts = np.zeros((b, 1))
        for i, (_, box) in enumerate(results):
            good = [v for v in box if v >= 0]
            packed[i, :len(good)] = good
            counts[i] = len(good)
        return packed, counts
    out = np.stack([r[0] for r in results]) if b else np.zeros(data.shape)
    if a.invalid_to_bottom:
        for i in range(b):
            good = [row.copy() for row in out[i] if row[0] >= 0]
            out[i] = -1.0
            out[i, :len(good)] = good
    return out


def _greedy(boxes, scores, keep, thr, limit, overlap, suppress):
    chosen = []
    for j in sorted(range(len(scores)), key=lambda j: -float(scores[j])):
        if keep(scores[j]) and (limit is None or len(chosen) < limit):
            if all(not suppress(overlap(boxes[j], boxes[p]), thr) for p in chosen):
                chosen.append(j)
    return chosen


def all_class_non_max_suppression(boxes, scores, max_out, thr, score_thr, a):
    b, c, n = scores.shape
    limit = int(np.asarray(max_out).reshape(-1)[0])
    limit = limit if limit > 0 else None
    thr, score_thr = float(np.asarray(thr).reshape(-1)[0]), float(np.asarray(score_thr).reshape(-1)[0])
    picks = [[_greedy(boxes[i], scores[i, k], lambda s: s > score_thr, thr, limit, _iou, lambda o, t: o >= t)
              for k in range(c)] for i in range(b)]
    if a.output_format == "onnx":
        rows = [[i, k, j] for i in range(b) for k in range(c) for j in picks[i][k]]
        out = np.zeros((b * c * n, 3))
        out[:len(rows)] = rows if rows else np.zeros((0, 3))
        return out, np.array([len(rows)])
    idx, sc, count = np.zeros((b, c * n, 2)), np.zeros((b, c * n)), np.zeros(b)
    for i in range(b):
        rows = [(k, j) for k in range(c) for j in picks[i][k]]
        for r, (k, j) in enumerate(rows):
            idx[i, r], sc[i, r] = (k, j), scores[i, k, j]
        count[i] = len(rows)
    return idx, sc, count


def _tflite_iou(a, b):
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(a[2], b[2]) - max(a[0], b[0]), 0.0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0.0)
    return inter / (area_a + area_b - inter)


def regular_non_max_suppression(boxes, scores, a):
    b, n, cols = scores.shape
    offset, m = cols - a.num_classes, a.max_detections
    outs = [np.zeros((b, m, 4)), np.zeros((b, m)), np.zeros((b, m)), np.zeros(b)]
    for i in range(b):
        found = []
        for k in range(a.num_classes):
            col = scores[i, :, k + offset]
            chosen = _greedy(boxes[i], col, lambda s: s >= a.score_threshold, a.iou_threshold,
                             a.max_detections_per_class, _tflite_iou, lambda o, t: o > t)
            found += [(col[j], k, j) for j in chosen]
        found = sorted(found, key=lambda t: -float(t[0]))[:m]
        for r, (score, k, j) in enumerate(found):
            outs[0][i, r], outs[1][i, r], outs[2][i, r] = boxes[i, j], k, score
        outs[3][i] = len(found)
    return tuple(outs)


def _to_nchw(data, layout):
    return np.transpose(data, [layout.index(c) for c in "NCHW"]).astype("float64")


def _from_nchw(out, layout):
    return np.transpose(out, ["NCHW".index(c) for c in layout])


def _bilinear(img, y, x):
    """ONNX's reference formulation: low/high pixels, edge pixels repeat."""
    h, w = img.shape[1:]
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y_lo, x_lo = int(y), int(x)
    if y_lo >= h - 1:
        y_hi = y_lo = h - 1
        y = float(y_lo)
    else:
        y_hi = y_lo + 1
    if x_lo >= w - 1:
        x_hi = x_lo = w - 1
        x = float(x_lo)
    else:
        x_hi = x_lo + 1
    ly, lx = y - y_lo, x - x_lo
    return ((1 - ly) * (1 - lx) * img[:, y_lo, x_lo] + (1 - ly) * lx * img[:, y_lo, x_hi]
            + ly * (1 - lx) * img[:, y_hi, x_lo] + ly * lx * img[:, y_hi, x_hi])


def roi_align(data, rois, a):
    x = _to_nchw(data, a.layout)
    ph, pw = a.pooled_size
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    shift = 0.5 if a.aligned else 0.0
    for r, roi in enumerate(rois):
        img = x[min(max(int(roi[0]), 0), x.shape[0] - 1)]
        x1, y1, x2, y2 = (float(v) * a.spatial_scale - shift for v in roi[1:])
        rh, rw = (y2 - y1, x2 - x1) if a.aligned else (max(y2 - y1, 1.0), max(x2 - x1, 1.0))
        gh = a.sample_ratio if a.sample_ratio > 0 else math.ceil(rh / ph)
        gw = a.sample_ratio if a.sample_ratio > 0 else math.ceil(rw / pw)
        for p in range(ph):
            for q in range(pw):
                samples = [_bilinear(img, y1 + p * rh / ph + (u + 0.5) * rh / ph / gh,
                                     x1 + q * rw / pw + (v + 0.5) * rw / pw / gw)
                           for u in range(gh) for v in range(gw)]
                if samples:
                    out[r, :, p, q] = np.max(samples, 0) if a.mode == "max" else np.mean(samples, 0)
    return _from_nchw(out, a.layout)


def roi_pool(data, rois, a):
    x = _to_nchw(data, a.layout)
    h, w = x.shape[2:]
    ph, pw = a.pooled_size
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    for r, roi in enumerate(rois):
        img = x[min(max(int(roi[0]), 0), x.shape[0] - 1)]
        x1, y1, x2, y2 = (int(np.round(float(v) * a.spatial_scale)) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for p in range(ph):
            for q in range(pw):
                rows = range(min(max(math.floor(p * bh) + y1, 0), h), min(max(math.ceil((p + 1) * bh) + y1, 0), h))
                cols = range(min(max(math.floor(q * bw) + x1, 0), w), min(max(math.ceil((q + 1) * bw) + x1, 0), w))
                cells = [img[:, u, v] for u in rows for v in cols]
                out[r, :, p, q] = np.max(cells, 0) if cells else 0.0
    return _from_nchw(out, a.layout)


def multibox_prior(data, a):
    h, w = data.shape[2:]
    step_h = a.steps[0] if a.steps[0] > 0 else 1.0 / h
    step_w = a.steps[1] if a.steps[1] > 0 else 1.0 / w
    boxes = []
    for i in range(h):
        for j in range(w):
            cy, cx = (i + a.offsets[0]) * step_h, (j + a.offsets[1]) * step_w
            for k in range(len(a.sizes) + len(a.ratios) - 1):
                if k < len(a.sizes):
                    bw, bh = a.sizes[k] * h / w / 2, a.sizes[k] / 2
                else:
                    r = math.sqrt(a.ratios[k - len(a.sizes) + 1])
                    bw, bh = a.sizes[0] * h / w * r / 2, a.sizes[0] / r / 2
                box = [cx - bw, cy - bh, cx + bw, cy + bh]
                boxes.append([min(max(v, 0.0), 1.0) for v in box] if a.clip else box)
    return np.array(boxes).reshape(1, -1, 4)


def multibox_transform_loc(cls_prob, loc, anchor, a):
    b, classes, n = cls_prob.shape
    out, count = np.full((b, n, 6), -1.0), np.zeros(b)
    for i in range(b):
        for j in range(n):
            first = 0 if a.keep_background else 1
            probs = [float(cls_prob[i, k, j]) for k in range(first, classes)]
            best = int(np.argmax(probs)) + first if probs else 0
            score = max(probs + [-1.0])
            if best > 0 and score < a.threshold:
                best = 0
            if a.keep_background or best > 0:
                al, at, ar, ab = anchor[0, j]
                px, py, pw, ph = loc[i, 4 * j:4 * j + 4]
                vx, vy, vw, vh = a.variances
                cx, cy = px * vx * (ar - al) + (al + ar) / 2, py * vy * (ab - at) + (at + ab) / 2
                hw, hh = math.exp(pw * vw) * (ar - al) / 2, math.exp(ph * vh) * (ab - at) / 2
                box = [cx - hw, cy - hh, cx + hw, cy + hh]
                if a.clip:
                    box = [min(max(v, 0.0), 1.0) for v in box]
                out[i, int(count[i])] = [best if a.keep_background else best - 1, score] + box
                count[i] += 1
    return out, count


def proposal(cls_prob, bbox_pred, im_info, a):
    b, _, height, width = cls_prob.shape
    base = float(a.feature_stride)
    anchors = []
    for ratio in a.ratios:
        for scale in a.scales:
            new_w = math.floor(math.sqrt(math.floor(base * base / ratio)) + 0.5) * scale
            new_h = math.floor(new_w / scale * ratio + 0.5) * scale
            c = 0.5 * (base - 1)
            anchors.append((c - 0.5 * (new_w - 1), c - 0.5 * (new_h - 1), c + 0.5 * (new_w - 1), c + 0.5 * (new_h - 1)))
    na, post = len(anchors), a.rpn_post_nms_top_n
    out = np.zeros((b * post, 5))
    for i in range(b):
        ih, iw, isc = (float(v) for v in im_info[i])
        cand = []
        for h in range(height):
            for w in range(width):
                for k, anc in enumerate(anchors):
                    x1, y1 = anc[0] + w * base, anc[1] + h * base
                    x2, y2 = anc[2] + w * base, anc[3] + h * base
                    dx, dy, dw, dh = (float(bbox_pred[i, 4 * k + q, h, w]) for q in range(4))
                    if a.iou_loss:
                        box = [x1 + dx, y1 + dy, x2 + dw, y2 + dh]
                    else:
                        bw, bh = x2 - x1 + 1, y2 - y1 + 1
                        cx, cy = dx * bw + x1 + 0.5 * (bw - 1), dy * bh + y1 + 0.5 * (bh - 1)
                        pw, ph = math.exp(dw) * bw, math.exp(dh) * bh
                        box = [cx - 0.5 * (pw - 1), cy - 0.5 * (ph - 1), cx + 0.5 * (pw - 1), cy + 0.5 * (ph - 1)]
                    box = [min(max(v, 0.0), lim - 1) for v, lim in zip(box, (iw, ih, iw, ih))]
                    score = float(cls_prob[i, na + k, h, w])
                    if h >= int(ih / base) or w >= int(iw / base):
                        score = -1.0
                    m = isc * a.rpn_min_size
                    if box[2] - box[0] + 1 < m or box[3] - box[1] + 1 < m:
                        box = [box[0] - m / 2, box[1] - m / 2, box[2] + m / 2, box[3] + m / 2]
                        score = -1.0
                    cand.append((score, box))
        order = sorted(range(len(cand)), key=lambda j: -cand[j][0])
        order = order[:a.rpn_pre_nms_top_n] if a.rpn_pre_nms_top_n > 0 else order
        kept = []
        for j in order:
            bj = cand[j][1]
            ok = True
            for p in kept:
                bp = cand[p][1]
                iw_ = max(0.0, min(bj[2], bp[2]) - max(bj[0], bp[0]) + 1)
                ih_ = max(0.0, min(bj[3], bp[3]) - max(bj[1], bp[1]) + 1)
                inter = iw_ * ih_
                union = (bj[2] - bj[0] + 1) * (bj[3] - bj[1] + 1) + (bp[2] - bp[0] + 1) * (bp[3] - bp[1] + 1) - inter
                ok = ok and inter / union <= a.threshold
            if ok:
                kept.append(j)
        for r in range(post if kept else 0):
            out[i * post + r] = [i] + cand[kept[r % len(kept)]][1]
    return out


def yolo_reorg(data, a):
    """TVM's reorg for each image: output element at flat (k, j, i) of the input shape reads
    Darknet's 'backward' index, then the block is read back in the output shape."""
    n, c, h, w = data.shape
    s = a.stride
    out_c = c // (s * s)
    out = np.zeros(n * c * h * w)
    for b in range(n):
        flat = data[b].reshape(-1)
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    offset = k // out_c
                    src = i * s + offset % s + w * s * (j * s + offset // s + h * s * (k % out_c))
                    out[((b * c + k) * h + j) * w + i] = flat[src]
    return out.reshape(n, c * s * s, h // s, w // s)
