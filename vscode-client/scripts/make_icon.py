"""Draw the extension's icon, images/icon.png (128x128): a ∂ (gradients: what a bprop returns) on a rounded
indigo-to-teal square, with a green check badge (the quick fix). Drawn at 4x and downsampled for smooth edges.

usage: python scripts/make_icon.py   (needs Pillow and the DejaVu fonts, Debian's fonts-dejavu-core; only to
redraw the icon: the PNG is checked in)
"""
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SIZE, SCALE = 128, 4
S = SIZE * SCALE
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-BoldItalic.ttf"
OUT = Path(__file__).resolve().parent.parent / "images" / "icon.png"


def lerp(a, b, t):
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))


def main() -> None:
    top, bottom = (49, 46, 129), (13, 148, 136)        # indigo-900 -> teal-600
    gradient = Image.new("RGBA", (S, S))
    px = gradient.load()
    for y in range(S):
        for x in range(S):
            px[x, y] = lerp(top, bottom, (0.65 * y + 0.35 * x) / S) + (255,)
    mask = Image.new("L", (S, S), 0)
    ImageDraw.Draw(mask).rounded_rectangle((0, 0, S - 1, S - 1), radius=26 * SCALE, fill=255)
    icon = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    icon.paste(gradient, (0, 0), mask)

    draw = ImageDraw.Draw(icon)
    font = ImageFont.truetype(FONT, 104 * SCALE)
    box = draw.textbbox((0, 0), "∂", font=font)
    w, h = box[2] - box[0], box[3] - box[1]
    x, y = (S - w) / 2 - box[0] - 8 * SCALE, (S - h) / 2 - box[1] - 4 * SCALE
    draw.text((x + 3 * SCALE, y + 4 * SCALE), "∂", font=font, fill=(0, 0, 0, 70))   # soft shadow
    draw.text((x, y), "∂", font=font, fill=(255, 255, 255, 255))

    # the check badge, bottom right
    r, cx, cy = 23 * SCALE, 98 * SCALE, 98 * SCALE
    draw.ellipse((cx - r - 4 * SCALE, cy - r - 4 * SCALE, cx + r + 4 * SCALE, cy + r + 4 * SCALE), fill=(255, 255, 255, 255))
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(34, 197, 94, 255))
    pts = [(cx - 11 * SCALE, cy + 1 * SCALE), (cx - 3 * SCALE, cy + 9 * SCALE), (cx + 12 * SCALE, cy - 8 * SCALE)]
    draw.line(pts, fill=(255, 255, 255, 255), width=6 * SCALE, joint="curve")
    for px_, py_ in (pts[0], pts[-1]):
        draw.ellipse((px_ - 3 * SCALE, py_ - 3 * SCALE, px_ + 3 * SCALE, py_ + 3 * SCALE), fill=(255, 255, 255, 255))

    icon.resize((SIZE, SIZE), Image.LANCZOS).save(OUT, optimize=True)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
