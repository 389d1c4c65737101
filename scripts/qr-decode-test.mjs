#!/usr/bin/env node
// Tests the web app's QR code reader (Sources/WaybillServer/Resources/web/js/qr-decode.js, used by
// the Scan page where the browser has no BarcodeDetector) against an independent encoder, qrencode:
// every version and level, the usual texts, module sizes and margins, then images made harder here
// (scaled, rotated, warped, shaded and noisy, small in a camera frame, damaged, mirrored) and images
// with no code at all. One line per case with the decode time; exits non-zero on any failure.
//   node scripts/qr-decode-test.mjs          (needs qrencode: apt-get install qrencode)
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { inflateSync } from "node:zlib";

if (spawnSync("qrencode", ["--version"]).error) {
  console.error("qrencode is missing: it is this test's independent encoder (Debian: apt-get install qrencode)");
  process.exit(1);
}

// The page loads the file as an ES module; a data: URL is one whatever node's version (no
// package.json here says "type": "module").
const source = readFileSync(new URL("../Sources/WaybillServer/Resources/web/js/qr-decode.js", import.meta.url));
const moduleURL = "data:text/javascript;base64," + source.toString("base64");
const { decodeQR } = await import(moduleURL);
const stack = (error) => String(error?.stack ?? error).split(moduleURL).join("qr-decode.js");

// ---------------------------------------------------------------- PNG (8-bit, not interlaced)
function readPNG(buf) {
  assert.equal(buf.subarray(0, 8).toString("hex"), "89504e470d0a1a0a", "not a PNG");
  let pos = 8, header;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString("latin1", pos + 4, pos + 8), body = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") header = { w: body.readUInt32BE(0), h: body.readUInt32BE(4), depth: body[8], colour: body[9], interlace: body[12] };
    else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    pos += 12 + len;
  }
  const { w, h, depth, colour, interlace } = header;
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colour];
  assert.ok(depth === 8 && channels && interlace === 0, `unsupported PNG: depth ${depth}, colour type ${colour}, interlace ${interlace}`);
  const raw = inflateSync(Buffer.concat(idat)), stride = w * channels, px = new Uint8Array(h * stride);
  for (let y = 0; y < h; y++) {
    const filter = raw[y * (stride + 1)], line = y * (stride + 1) + 1;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0, b = y ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y ? px[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      assert.ok(predictor !== undefined, `PNG filter ${filter}`);
      px[y * stride + x] = (raw[line + x] + predictor) & 0xff;
    }
  }
  // To grey levels, over white where there is alpha.
  const v = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const p = px.subarray(i * channels, (i + 1) * channels);
    const grey = channels >= 3 ? 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] : p[0];
    const alpha = channels === 2 || channels === 4 ? p[channels - 1] / 255 : 1;
    v[i] = grey * alpha + 255 * (1 - alpha);
  }
  return { w, h, v };
}

// ---------------------------------------------------------------- images
function qrencode(text, { level = "M", size = 4, margin = 4, version, extra = [] } = {}) {
  const args = ["-t", "PNG32", "-o", "-", "-l", level, "-s", String(size), "-m", String(margin), ...extra];
  if (version) args.push("-v", String(version));
  const png = execFileSync("qrencode", args, { input: typeof text === "string" ? Buffer.from(text, "utf8") : text, maxBuffer: 1 << 26 });
  const g = readPNG(png);
  return Object.assign(g, { size, margin, dim: g.w / size - 2 * margin });
}

// What decodeQR gets from a canvas: RGBA. `tint` maps a grey level to a colour.
function imageData(g, tint = (v) => [v, v, v]) {
  const data = new Uint8ClampedArray(g.w * g.h * 4);
  for (let i = 0; i < g.w * g.h; i++) data.set([...tint(g.v[i]), 255], i * 4);
  return { data, width: g.w, height: g.h };
}

function random(seed) { // mulberry32
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Bilinear sample at (x, y) in pixel units (pixel centres at +0.5); `bg` outside.
function bilinear(g, x, y, bg) {
  x -= 0.5; y -= 0.5;
  const x0 = Math.floor(x), y0 = Math.floor(y), fx = x - x0, fy = y - y0;
  const at = (X, Y) => (X >= 0 && Y >= 0 && X < g.w && Y < g.h ? g.v[Y * g.w + X] : bg);
  return (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) + (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy;
}

// A w×h image showing g at source(x, y) for each point, averaged over 3×3 points per pixel like a
// camera's pixels (no aliasing when shrinking).
function render(g, w, h, source, bg = 255) {
  const v = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let j = 0; j < 3; j++) for (let i = 0; i < 3; i++) s += bilinear(g, ...source(x + (i + 0.5) / 3, y + (j + 0.5) / 3), bg);
      v[y * w + x] = s / 9;
    }
  }
  return { w, h, v };
}

// g scaled by `scale` and turned by `angle` degrees about its centre, which lands at (cx, cy) of a
// w×h image (by default just large enough).
function place(g, { scale = 1, angle = 0, w, h, cx, cy, bg = 255 } = {}) {
  const a = (angle * Math.PI) / 180, cos = Math.cos(a), sin = Math.sin(a);
  w ??= Math.ceil((Math.abs(cos) * g.w + Math.abs(sin) * g.h) * scale);
  h ??= Math.ceil((Math.abs(sin) * g.w + Math.abs(cos) * g.h) * scale);
  cx ??= w / 2; cy ??= h / 2;
  return render(g, w, h, (x, y) => {
    const dx = (x - cx) / scale, dy = (y - cy) / scale;
    return [g.w / 2 + cos * dx + sin * dy, g.h / 2 - sin * dx + cos * dy];
  }, bg);
}

// A projective warp: the image's corners go to `quad` (fractions of its size) in an image of the same size.
function perspective(g, quad) {
  const dst = quad.map(([x, y]) => [x * g.w, y * g.h]), src = [[0, 0], [g.w, 0], [0, g.h], [g.w, g.h]];
  // The map from the warped image back to the source: 8 unknowns, Gauss–Jordan.
  const A = dst.flatMap(([x, y], i) => [[x, y, 1, 0, 0, 0, -x * src[i][0], -y * src[i][0], src[i][0]],
    [0, 0, 0, x, y, 1, -x * src[i][1], -y * src[i][1], src[i][1]]]);
  for (let c = 0; c < 8; c++) {
    const p = A.slice(c).reduce((best, row, i) => (Math.abs(row[c]) > Math.abs(A[best][c]) ? c + i : best), c);
    [A[c], A[p]] = [A[p], A[c]];
    for (let r = 0; r < 8; r++) if (r !== c) { const f = A[r][c] / A[c][c]; for (let k = c; k < 9; k++) A[r][k] -= f * A[c][k]; }
  }
  const m = A.map((row, i) => row[8] / row[i]);
  return render(g, g.w, g.h, (x, y) => {
    const z = m[6] * x + m[7] * y + 1;
    return [(m[0] * x + m[1] * y + m[2]) / z, (m[3] * x + m[4] * y + m[5]) / z];
  });
}

// Uneven light (dark on one side, brighter at the bottom), lower contrast and gaussian noise.
function shade(g, { seed = 1, sigma = 10, contrast = 0.6 } = {}) {
  const rnd = random(seed), v = new Float32Array(g.v.length);
  for (let y = 0; y < g.h; y++) {
    for (let x = 0; x < g.w; x++) {
      const noise = Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd()) * sigma;
      const light = 0.35 + 0.65 * (x / g.w);
      v[y * g.w + x] = Math.min(255, Math.max(0, (g.v[y * g.w + x] * contrast + 40) * light + 30 * (y / g.h) + noise));
    }
  }
  return { w: g.w, h: g.h, v };
}

const mirror = (g) => render(g, g.w, g.h, (x, y) => [g.w - x, y]);

// Flips modules of a qrencode image (module coordinates); `pick` chooses data modules at random
// away from the finders, timing patterns and the bottom-right alignment pattern.
function flip(g, modules) {
  const v = g.v.slice();
  for (const [mx, my] of modules) {
    for (let y = 0; y < g.size; y++) {
      for (let x = 0; x < g.size; x++) {
        const i = ((g.margin + my) * g.size + y) * g.w + (g.margin + mx) * g.size + x;
        v[i] = 255 - v[i];
      }
    }
  }
  return { ...g, v };
}
function pick(g, count, seed) {
  const rnd = random(seed), out = new Set(), a = g.dim - 7;
  while (out.size < count) {
    const x = 9 + Math.floor(rnd() * (g.dim - 18)), y = 9 + Math.floor(rnd() * (g.dim - 18));
    if (x === 6 || y === 6 || (Math.abs(x - a) <= 2 && Math.abs(y - a) <= 2)) continue;
    out.add(`${x},${y}`);
  }
  return [...out].map((s) => s.split(",").map(Number));
}

// Random printable text of n characters: digit runs, upper-case runs and lower-case words, so
// qrencode mixes numeric, alphanumeric and byte segments.
function mixedText(n, seed) {
  const rnd = random(seed), parts = [];
  let len = 0;
  while (len < n) {
    const kind = rnd(), k = 3 + Math.floor(rnd() * 12);
    const chars = kind < 0.3 ? "0123456789" : kind < 0.5 ? "ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:" : "abcdefghijklmnopqrstuvwxyz ,;!?'\"()";
    const part = Array.from({ length: k }, () => chars[Math.floor(rnd() * chars.length)]).join("");
    parts.push(part);
    len += part.length;
  }
  return parts.join("").slice(0, n);
}

// ---------------------------------------------------------------- cases
const cases = [];
const add = (name, g, expect, opts = {}) => cases.push({ name, image: g.data ? g : imageData(g, opts.tint), expect, frame: opts.frame });

const URL_TEXT = "https://waybill.example/h/AbCdEfGhIjKlMnOpQrStUvWx";
const LEVELS = ["L", "M", "Q", "H"];

// Every version and level, with mixed text filling roughly 85 % of the symbol (less where qrencode
// needs a larger version for it: then 15 % shorter until it fits).
const rawCodewords = (v) => {
  let bits = (16 * v + 128) * v + 64;
  if (v >= 2) { const n = Math.floor(v / 7) + 2; bits -= (25 * n - 10) * n - 55; }
  if (v >= 7) bits -= 36;
  return bits >> 3;
};
const sweep = [];
for (let version = 1; version <= 40; version++) {
  for (const [l, level] of LEVELS.entries()) {
    let n = Math.max(4, Math.floor(rawCodewords(version) * [0.8, 0.62, 0.45, 0.35][l] * 0.85));
    for (;;) {
      const text = mixedText(n, version * 4 + l);
      const g = qrencode(text, { level, size: 2, margin: 2, version });
      if (g.dim === 17 + 4 * version) { sweep.push({ version, level, text, image: imageData(g) }); break; }
      n = Math.floor(n * 0.85);
    }
  }
}

// The usual texts, levels, module sizes and margins.
const texts = [
  ["URL", URL_TEXT],
  ["digits", "31415926535897932384626433832795028841971693993751"],
  ["alphanumeric", "WAYBILL-42 $%*+-./: PARCEL 0007"],
  ["UTF-8", "Zürich – café"],
  ["UTF-8 mixed", "Łódź 42 → Köln, 東京 ✓"],
  ["one character", "7"],
];
texts.forEach(([name, text], t) => {
  LEVELS.forEach((level, l) => {
    const size = 2 + ((t + l) % 7), margin = [1, 2, 4, 6][(t + 2 * l) % 4];
    add(`${name}, ${level}, -s ${size} -m ${margin}`, qrencode(text, { level, size, margin }), text);
  });
});
for (const [n, level] of [[150, "M"], [250, "M"], [350, "Q"], [450, "L"], [600, "M"], [700, "L"]]) {
  const text = mixedText(n, n), g = qrencode(text, { level, size: 3 });
  add(`${n} characters, ${level}: version ${(g.dim - 17) / 4}`, g, text);
}
add("8-bit mode only (-8)", qrencode(URL_TEXT, { extra: ["-8"] }), URL_TEXT);
add("upper case only (-i)", qrencode("waybill parcel 42", { extra: ["-i"] }), "WAYBILL PARCEL 42");
const sjis = Buffer.from([0x93, 0x5f, 0xe4, 0xaa, 0x8b, 0x9e]); // 点茗京 in Shift JIS
let kanji = null;
try { kanji = new TextDecoder("shift_jis").decode(sjis); } catch { /* node without full ICU */ }
if (kanji) add(`kanji mode (-k): ${kanji}`, qrencode(sjis, { extra: ["-k"], size: 5 }), kanji);
else console.log("(kanji case skipped: this node's TextDecoder has no shift_jis)");
const margin0 = qrencode(URL_TEXT, { margin: 0, size: 4 });
add("no quiet zone (-m 0), in a white frame", place(margin0, { w: margin0.w + 40, h: margin0.h + 40 }), URL_TEXT);

// Structured append: each symbol of the set reads as its own part.
const folder = mkdtempSync(`${process.env.TMPDIR || "/tmp"}/qr-decode-test-`);
try {
  const text = mixedText(120, 7);
  // (qrencode writes a set only as 1-bit PNG, EPS, SVG or text: text it is, two characters a module.)
  execFileSync("qrencode", ["-S", "-v", "2", "-l", "M", "-t", "ASCII", "-m", "4", "-o", `${folder}/part.txt`], { input: text });
  const parts = readdirSync(folder).sort().map((f) => {
    const lines = readFileSync(`${folder}/${f}`, "utf8").split("\n").filter((l) => l.length), size = 4;
    const g = { w: (lines[0].length / 2) * size, h: lines.length * size };
    g.v = Float32Array.from({ length: g.w * g.h }, (_, i) => (lines[Math.floor(i / g.w / size)][2 * Math.floor((i % g.w) / size)] === "#" ? 0 : 255));
    return g;
  });
  assert.ok(parts.length >= 2, "qrencode -S made one symbol");
  cases.push({ name: `structured append, ${parts.length} symbols joined`, expect: text, got: () => parts.map((g) => decodeQR(imageData(g))).join("") });
} finally {
  rmSync(folder, { recursive: true, force: true });
}

// Harder images.
const base = qrencode(URL_TEXT, { level: "M", size: 4 });
add("scaled ×1.37 (bilinear)", place(base, { scale: 1.37 }), URL_TEXT);
add("scaled ×0.71: 2.8 px modules", place(base, { scale: 0.71 }), URL_TEXT);
add("scaled ×4.6: 18 px modules", place(qrencode("PARCEL 42", { size: 4, level: "L" }), { scale: 4.6 }), "PARCEL 42");
for (const angle of [7, 33, 45, 90, 180, 270, -20]) add(`rotated ${angle}°`, place(base, { angle }), URL_TEXT);
add("perspective, mild", perspective(base, [[0.05, 0.02], [0.93, 0.08], [0.02, 0.97], [0.98, 0.9]]), URL_TEXT);
add("perspective and 12° turn", perspective(place(base, { angle: 12 }), [[0.0, 0.06], [0.97, 0.0], [0.06, 0.95], [0.92, 1.0]]), URL_TEXT);
const long = mixedText(400, 400), longCode = qrencode(long, { level: "M", size: 3 });
add(`version ${(longCode.dim - 17) / 4}, rotated 8° with perspective`, perspective(place(longCode, { angle: 8 }), [[0.03, 0.03], [0.96, 0.0], [0.0, 0.97], [0.97, 0.95]]), long);
add("uneven light, noise", shade(base, { seed: 3 }), URL_TEXT);
add("uneven light, strong noise, rotated 25°", shade(place(base, { angle: 25 }), { seed: 4, sigma: 18, contrast: 0.5 }), URL_TEXT);
add("dark blue on yellow paper", base, URL_TEXT, { tint: (v) => [v, v * 0.9 + 20, v < 128 ? 110 : 90] });
add("mirrored", mirror(base), URL_TEXT);
add("mirrored, rotated 30°", place(mirror(base), { angle: 30 }), URL_TEXT);
// A camera's view: the label somewhere in a 640×480 frame of grey surroundings, shaded.
const camera = (name, g, text, opts, seed) =>
  add(name, shade(place(g, { w: 640, h: 480, bg: 128, ...opts }), { seed, sigma: 6, contrast: 0.8 }), text, { frame: true });
camera("640×480 frame: small (2.6 px modules)", base, URL_TEXT, { scale: 0.66, cx: 200, cy: 300 }, 5);
camera("640×480 frame: rotated 20°", base, URL_TEXT, { scale: 0.8, angle: 20, cx: 420, cy: 200 }, 6);
camera("640×480 frame: close up (7.6 px modules)", base, URL_TEXT, { scale: 1.9, angle: -8, cx: 320, cy: 240 }, 7);
camera(`640×480 frame: version ${(longCode.dim - 17) / 4}`, longCode, long, { scale: 1.15, angle: 4, cx: 330, cy: 245 }, 8);

// Damage, within what the level corrects…
const h3text = mixedText(40, 9), h3 = qrencode(h3text, { level: "H", size: 4, version: 3 });
add("H, 10 random modules flipped", flip(h3, pick(h3, 10, 1)), h3text);
add("H, 18 random modules flipped", flip(h3, pick(h3, 18, 2)), h3text);
const smudge = [];
for (let y = 12; y < 17; y++) for (let x = 11; x < 16; x++) smudge.push([x, y]);
add("H, a 5×5 module smudge", flip(h3, smudge), h3text);
add("H, 14 modules flipped, rotated 15°, shaded", shade(place(flip(h3, pick(h3, 14, 3)), { angle: 15 })), h3text);
add("format information: 3 bits of the first copy wrong", flip(base, [[0, 8], [8, 2], [8, 7]]), URL_TEXT);
add("format information: first copy destroyed", flip(base, [[0, 8], [2, 8], [4, 8], [8, 1], [8, 3], [8, 5], [7, 8]]), URL_TEXT);
const m7text = mixedText(150, 11), m7 = qrencode(m7text, { level: "M", size: 3, version: 7 }), d = m7.dim;
add("version 7, version information: 3 bits wrong in both copies",
  flip(m7, [[d - 11, 0], [d - 9, 3], [d - 10, 5], [0, d - 11], [3, d - 10], [5, d - 9]]), m7text);
// …and beyond it: no text rather than a wrong one.
const l4 = qrencode(URL_TEXT, { level: "L", size: 4 });
add("L, 120 modules flipped: unreadable", flip(l4, pick(l4, 120, 4)), null);

// No code at all.
const blank = (level) => ({ w: 640, h: 480, v: new Float32Array(640 * 480).fill(level) });
const noise = (seed) => { const rnd = random(seed); const g = blank(0); g.v = g.v.map(() => rnd() * 255); return g; };
add("640×480 white", blank(255), null, { frame: true });
add("640×480 grey", blank(128), null, { frame: true });
add("640×480 black", blank(0), null, { frame: true });
add("640×480 random noise", noise(1), null, { frame: true });
add("640×480 coarse random blocks", render(noise(2), 640, 480, (x, y) => [Math.floor(x / 6) + 0.5, Math.floor(y / 6) + 0.5]), null, { frame: true });
add("half a code", { w: base.w, h: base.h / 2, v: base.v.slice(0, (base.w * base.h) / 2) }, null);
add("21×21 pixels of nothing", { w: 21, h: 21, v: new Float32Array(441).fill(200) }, null);
add("4×4 pixels", { w: 4, h: 4, v: new Float32Array(16) }, null);

// ---------------------------------------------------------------- run
function timed(image) {
  const runs = [];
  let got, error;
  for (let i = 0; i < 3; i++) { // the median of three runs
    const t0 = performance.now();
    try { got = decodeQR(image); } catch (e) { error = e; }
    runs.push(performance.now() - t0);
  }
  return { got, error, ms: runs.sort((a, b) => a - b)[1] };
}

const times = [], frameTimes = [], emptyFrameTimes = [];
let failures = 0;
const report = (name, failed, ms, detail = "") => {
  failures += failed;
  console.log(`${failed ? "FAIL" : "pass"}  ${ms.toFixed(1).padStart(6)} ms  ${name}${detail}`);
};
const show = (s) => (typeof s !== "string" ? String(s) : JSON.stringify(s.length > 60 ? s.slice(0, 60) + "…" : s));
const problem = (r, expect) => (r.error ? `  threw ${stack(r.error)}` : r.got === expect ? "" : `  expected ${show(expect)}, got ${show(r.got)}`);

console.log("every version and level (the worst time of the four levels)");
for (let version = 1; version <= 40; version++) {
  const results = sweep.filter((s) => s.version === version).map((s) => ({ ...s, ...timed(s.image) }));
  const bad = results.filter((r) => problem(r, r.text));
  results.forEach((r) => times.push(r.ms));
  report(`version ${version} (${17 + 4 * version} modules), L M Q H, ${results.map((r) => r.text.length).join("/")} characters`,
    bad.length, Math.max(...results.map((r) => r.ms)), bad.map((r) => `  ${r.level}:${problem(r, r.text).slice(1)}`).join(""));
}
console.log("\nother cases");
for (const c of cases) {
  let r;
  if (c.got) {
    try { r = { got: c.got(), ms: 0 }; } catch (error) { r = { error, ms: 0 }; }
  } else {
    r = timed(c.image);
    times.push(r.ms);
    if (c.frame) (c.expect === null ? emptyFrameTimes : frameTimes).push(r.ms);
  }
  const detail = problem(r, c.expect);
  report(c.name, detail ? 1 : 0, r.ms, detail);
}

const median = (l) => l.slice().sort((a, b) => a - b)[Math.floor(l.length / 2)];
const ms = (v) => `${v.toFixed(1)} ms`;
console.log(`\n${sweep.length + cases.length} cases (${sweep.length} in the version sweep), ${failures} failed. ` +
  `Decode time: median ${ms(median(times))}, worst ${ms(Math.max(...times))}; 640×480 frames with a code: median ` +
  `${ms(median(frameTimes))}, worst ${ms(Math.max(...frameTimes))}; without one: worst ${ms(Math.max(...emptyFrameTimes))}.`);
if (median(frameTimes) > 100) { console.log("640×480 frames take too long (median over 100 ms)"); failures++; }
process.exit(failures ? 1 : 0);
