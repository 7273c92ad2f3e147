#!/usr/bin/env python3
# keel: a plan view of a level's floors with the spawn spots on it, as a PNG.
# MIT licence, see LICENSE.
#
#   build/test_spawn --filter 'spawn/sixty_four*' --verbose 2>&1 |
#       scripts/spawn-plan.py ../shared/levels/sauerbraten_zdm2.obj docs/spawns-zdm2.png
#
# Reads the OBJ (Y up, scaled by --scale, default 0.12 as keel loads the real
# maps) and the lines "NAME: spawn ID X Y Z" that tests/test_spawn.c logs for
# the level whose file name matches the OBJ's (keel-server's 64 spawns: the
# library's spawn spots, each player on the first free one). Draws, seen from
# above (x to the right, z down the picture), every upward-facing triangle
# (normal y >= 0.7: walkable), the lowest floor under each pixel (the highest
# would be the maps' outer roofs, hiding the rooms), shaded from dark (low)
# to light (high), and each spawn as a red dot with its player id (its
# height is in the test's log). Only the standard library: the PNG is
# written by hand.
import argparse
import math
import os
import re
import struct
import sys
import zlib

# 3x5 digits, rows top to bottom, bits left to right.
DIGITS = {
    "0": [7, 5, 5, 5, 7], "1": [2, 6, 2, 2, 7], "2": [7, 1, 7, 4, 7], "3": [7, 1, 7, 1, 7],
    "4": [5, 5, 7, 1, 1], "5": [7, 4, 7, 1, 7], "6": [7, 4, 7, 5, 7], "7": [7, 1, 1, 1, 1],
    "8": [7, 5, 7, 5, 7], "9": [7, 5, 7, 1, 7],
}


def read_obj(path, scale):
    verts, tris = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                x, y, z = (float(t) * scale for t in line.split()[1:4])
                verts.append((x, y, z))
            elif line.startswith("f "):
                ix = [int(t.split("/")[0]) for t in line.split()[1:]]
                ix = [i - 1 if i > 0 else len(verts) + i for i in ix]
                for k in range(1, len(ix) - 1):
                    tris.append((ix[0], ix[k], ix[k + 1]))
    return verts, tris


def read_spawns(stream, level):
    pat = re.compile(r"(\S+): spawn (\d+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+)")
    spawns = []
    for line in stream:
        m = pat.search(line)
        if m and m.group(1) == level:
            spawns.append((int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5))))
    return spawns


def write_png(path, w, h, rgb):
    raw = b"".join(b"\x00" + bytes(rgb[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(tag, data):
        c = struct.pack(">I", len(data)) + tag + data
        return c + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("obj")
    ap.add_argument("png")
    ap.add_argument("--scale", type=float, default=0.12)
    ap.add_argument("--ppm", type=float, default=8.0, help="pixels per metre")
    a = ap.parse_args()
    verts, tris = read_obj(a.obj, a.scale)
    spawns = read_spawns(sys.stdin, os.path.basename(a.obj))
    if not spawns:
        sys.exit("spawn-plan: no 'spawn' lines for %s on standard input" % os.path.basename(a.obj))
    x0 = min(v[0] for v in verts) - 1
    x1 = max(v[0] for v in verts) + 1
    z0 = min(v[2] for v in verts) - 1
    z1 = max(v[2] for v in verts) + 1
    y0 = min(v[1] for v in verts)
    y1 = max(v[1] for v in verts)
    w, h = int((x1 - x0) * a.ppm) + 1, int((z1 - z0) * a.ppm) + 1
    top = [None] * (w * h)
    for t in tris:
        p, q, r = (verts[i] for i in t)
        ux, uy, uz = q[0] - p[0], q[1] - p[1], q[2] - p[2]
        vx, vy, vz = r[0] - p[0], r[1] - p[1], r[2] - p[2]
        nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
        ln = math.sqrt(nx * nx + ny * ny + nz * nz)
        if ln == 0 or ny / ln < 0.7:
            continue
        # pixel centres inside the triangle's plan, with the height there
        pts = [((v[0] - x0) * a.ppm, (v[2] - z0) * a.ppm, v[1]) for v in (p, q, r)]
        det = (pts[1][0] - pts[0][0]) * (pts[2][1] - pts[0][1]) - (pts[2][0] - pts[0][0]) * (pts[1][1] - pts[0][1])
        if det == 0:
            continue
        bx0 = max(0, int(math.floor(min(s[0] for s in pts))))
        bx1 = min(w - 1, int(math.ceil(max(s[0] for s in pts))))
        by0 = max(0, int(math.floor(min(s[1] for s in pts))))
        by1 = min(h - 1, int(math.ceil(max(s[1] for s in pts))))
        for py in range(by0, by1 + 1):
            cy = py + 0.5
            for px in range(bx0, bx1 + 1):
                cx = px + 0.5
                l1 = ((pts[1][0] - cx) * (pts[2][1] - cy) - (pts[2][0] - cx) * (pts[1][1] - cy)) / det
                l2 = ((pts[2][0] - cx) * (pts[0][1] - cy) - (pts[0][0] - cx) * (pts[2][1] - cy)) / det
                l3 = 1 - l1 - l2
                if l1 < -1e-9 or l2 < -1e-9 or l3 < -1e-9:
                    continue
                y = l1 * pts[0][2] + l2 * pts[1][2] + l3 * pts[2][2]
                k = py * w + px
                if top[k] is None or y < top[k]:
                    top[k] = y
    rgb = bytearray(w * h * 3)
    span = (y1 - y0) or 1
    for k, y in enumerate(top):
        if y is None:
            c = (40, 40, 40)
        else:
            f = (y - y0) / span
            c = (int(70 + 150 * f), int(90 + 140 * f), int(110 + 130 * f))
        rgb[3 * k:3 * k + 3] = bytes(c)

    def put(px, py, c):
        if 0 <= px < w and 0 <= py < h:
            rgb[3 * (py * w + px):3 * (py * w + px) + 3] = bytes(c)

    for sid, sx, sy, sz in spawns:
        cx, cy = int((sx - x0) * a.ppm), int((sz - z0) * a.ppm)
        for dy in range(-5, 6):
            for dx in range(-5, 6):
                d = dx * dx + dy * dy
                if d <= 25:
                    put(cx + dx, cy + dy, (255, 255, 255) if d > 12 else (220, 30, 30))
        text = str(sid)
        tx, ty = cx + 7, cy - 5
        for i in range(-1, len(text) * 8 + 1):
            for j in range(-1, 11):
                put(tx + i, ty + j, (255, 255, 255))
        for n, ch in enumerate(text):
            for row, bits in enumerate(DIGITS[ch]):
                for col in range(3):
                    if bits & (4 >> col):
                        for sy2 in range(2):
                            for sx2 in range(2):
                                put(tx + n * 8 + col * 2 + sx2, ty + row * 2 + sy2, (0, 0, 0))
    write_png(a.png, w, h, rgb)
    print("spawn-plan: %s, %dx%d px (%.1f x %.1f m, %g px/m), floors %.2f..%.2f m, %d spawns" %
          (a.png, w, h, x1 - x0, z1 - z0, a.ppm, y0, y1, len(spawns)))


if __name__ == "__main__":
    main()
