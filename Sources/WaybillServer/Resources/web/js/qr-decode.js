// QR code reader for the Scan page where the browser has no BarcodeDetector (Firefox, Chrome on
// desktop Linux, older Safari). No dependencies; written for Waybill from ISO/IEC 18004.
//   decodeQR({ data, width, height }) (an ImageData: RGBA) → the text, or null.
// Model 2 symbols, versions 1–40, levels L, M, Q and H; numeric, alphanumeric, byte (read as
// UTF-8) and kanji segments; ECI, FNC1 and structured append headers are skipped. A mirrored
// symbol is read too. Steps: local threshold → finder patterns → module size and version →
// alignment pattern → perspective sampling → format and version information → unmasking →
// codewords in zig-zag order → blocks and Reed–Solomon → data segments.

export function decodeQR(image) {
  const { data, width: w, height: h } = image ?? {};
  if (!data || !Number.isInteger(w) || !Number.isInteger(h) || w < 21 || h < 21 || data.length < w * h * 4) return null;
  const lum = new Uint8Array(w * h);
  for (let i = 0, p = 0; i < lum.length; i++, p += 4) lum[i] = (data[p] * 77 + data[p + 1] * 150 + data[p + 2] * 29) >> 8;
  // As seen, then smoothed: noise in dim light breaks the finders' runs, but smoothing blurs
  // modules of 2 pixels.
  for (const smoothed of [false, true]) {
    const bits = binarize(smoothed ? smooth(lum, w, h) : lum, w, h);
    for (const corners of finderTriples(findFinders(bits, w, h))) {
      const text = readAt(bits, w, h, corners);
      if (text !== null) return text;
    }
  }
  return null;
}

const dist = (a, b) => Math.hypot(a.x - b.x, a.y - b.y);
const mean = (list) => list.reduce((s, v) => s + v, 0) / list.length;

// ---- 1. Black and white (1 = dark). Each 8×8 block is cut at the mean level of the 5×5 blocks
// around it, so shadows and uneven light do not matter. A flat block (no edge in it) takes its
// neighbours' level when it is darker than them (inside a large dark module), else counts as light.
function binarize(lum, w, h) {
  const bw = Math.ceil(w / 8), bh = Math.ceil(h / 8), level = new Float32Array(bw * bh);
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++) {
      const x0 = Math.min(bx * 8, w - 8), y0 = Math.min(by * 8, h - 8);
      let sum = 0, min = 255, max = 0;
      for (let y = y0; y < y0 + 8; y++) {
        for (let i = y * w + x0, e = i + 8; i < e; i++) {
          const v = lum[i];
          sum += v;
          if (v < min) min = v;
          if (v > max) max = v;
        }
      }
      let t = sum / 64;
      if (max - min <= 24) {
        t = min / 2;
        if (bx > 0 && by > 0) {
          const around = (level[(by - 1) * bw + bx] + 2 * level[by * bw + bx - 1] + level[(by - 1) * bw + bx - 1]) / 4;
          if (min < around) t = around;
        }
      }
      level[by * bw + bx] = t;
    }
  }
  const bits = new Uint8Array(w * h);
  for (let by = 0; by < bh; by++) {
    const y0 = Math.max(0, Math.min(by - 2, bh - 5)), y1 = Math.min(bh, y0 + 5);
    for (let bx = 0; bx < bw; bx++) {
      const x0 = Math.max(0, Math.min(bx - 2, bw - 5)), x1 = Math.min(bw, x0 + 5);
      let sum = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += level[y * bw + x];
      const t = sum / ((y1 - y0) * (x1 - x0));
      for (let y = by * 8, ye = Math.min(h, y + 8); y < ye; y++) {
        for (let i = y * w + bx * 8, e = y * w + Math.min(w, bx * 8 + 8); i < e; i++) bits[i] = lum[i] <= t ? 1 : 0;
      }
    }
  }
  return bits;
}

// A [1 2 1] blur across and down.
function smooth(lum, w, h) {
  const t = new Uint16Array(w * h), out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0, i = y * w; x < w; x++, i++) t[i] = lum[x ? i - 1 : i] + 2 * lum[i] + lum[x < w - 1 ? i + 1 : i];
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0, i = y * w; x < w; x++, i++) out[i] = (t[y ? i - w : i] + 2 * t[i] + t[y < h - 1 ? i + w : i]) >> 4;
  }
  return out;
}

// ---- 2. Finder patterns: dark, light, dark, light, dark runs in the ratio 1:1:3:1:1 along a row,
// confirmed along the column, the row again and either diagonal through the centre (the ratio holds
// along any line through the centre of concentric squares, so rotation does not matter). Hits of
// one pattern on neighbouring rows are merged; `count` says how many.
function ratioOK(c, o = 0) {
  const total = c[o] + c[o + 1] + c[o + 2] + c[o + 3] + c[o + 4];
  if (total < 7) return false;
  const m = total / 7, v = m / 2;
  return Math.abs(c[o] - m) < v && Math.abs(c[o + 1] - m) < v && Math.abs(c[o + 2] - 3 * m) < 3 * v &&
    Math.abs(c[o + 3] - m) < v && Math.abs(c[o + 4] - m) < v;
}

function findFinders(bits, w, h) {
  const found = [], runs = new Int32Array(w + 1);
  for (let y = 0; y < h; y++) {
    let n = 0, len = 0, colour = 0;
    for (let i = y * w, e = i + w; i < e; i++) {
      if (bits[i] === colour) len++;
      else { runs[n++] = len; len = 1; colour = bits[i]; }
    }
    runs[n++] = len; // runs alternate light, dark, light… from the row's start (the first may be empty)
    for (let i = 1, x = runs[0]; i + 4 < n; x += runs[i] + runs[i + 1], i += 2) {
      if (!ratioOK(runs, i)) continue;
      const total = runs[i] + runs[i + 1] + runs[i + 2] + runs[i + 3] + runs[i + 4];
      const v = crossRun(bits, w, h, x + runs[i] + runs[i + 1] + runs[i + 2] / 2, y + 0.5, 0, 1, total, 0.4);
      const hz = v && crossRun(bits, w, h, v.x, v.y, 1, 0, total, 0.4);
      if (!hz || !(crossRun(bits, w, h, hz.x, hz.y, 1, 1, total, Infinity) || crossRun(bits, w, h, hz.x, hz.y, 1, -1, total, Infinity))) continue;
      merge(found, { x: hz.x, y: hz.y, size: (v.total + hz.total) / 14, count: 1 });
    }
  }
  return found;
}

// The runs through (x, y) along (dx, dy): a dark middle, then light and dark on each side. Gives
// the middle run's centre and the total length when they are 1:1:3:1:1 and the total is within
// `tolerance` of `expect`.
function crossRun(bits, w, h, x, y, dx, dy, expect, tolerance) {
  const px = Math.floor(x), py = Math.floor(y), c = [0, 0, 0, 0, 0];
  if (px < 0 || py < 0 || px >= w || py >= h || bits[py * w + px] !== 1) return null;
  let back = 0;
  for (const dir of [-1, 1]) {
    let s = 2;
    for (let k = dir < 0 ? 0 : 1; ; k++) {
      const X = px + dir * k * dx, Y = py + dir * k * dy;
      if (X < 0 || Y < 0 || X >= w || Y >= h) break;
      if ((bits[Y * w + X] === 1) !== (s !== 2 + dir)) {
        if (s === 2 + 2 * dir) break;
        s += dir;
      }
      if (++c[s] > expect) return null;
    }
    if (s !== 2 + 2 * dir) return null;
    if (dir < 0) back = c[2];
  }
  const total = c[0] + c[1] + c[2] + c[3] + c[4];
  if (!ratioOK(c) || Math.abs(total - expect) > tolerance * expect) return null;
  const centre = (c[2] + 1) / 2 - back; // from pixel (px, py)'s centre to the dark run's middle, in steps
  return { x: dx ? px + 0.5 + dx * centre : x, y: dy ? py + 0.5 + dy * centre : y, total };
}

function merge(found, p) {
  for (const f of found) {
    if (Math.abs(f.x - p.x) <= f.size && Math.abs(f.y - p.y) <= f.size && Math.abs(f.size - p.size) <= Math.max(1, f.size)) {
      const n = f.count + 1;
      f.x = (f.x * f.count + p.x) / n;
      f.y = (f.y * f.count + p.y) / n;
      f.size = (f.size * f.count + p.size) / n;
      f.count = n;
      return;
    }
  }
  if (found.length < 500) found.push(p);
}

// ---- 3. Which three finders: similar sizes at the corners of a right isosceles triangle, give or
// take perspective. The corner at the right angle is the top left; the turning direction tells
// the top right from the bottom left. Best-looking first.
function finderTriples(found) {
  const c = found.filter((f) => f.count >= 2).sort((a, b) => b.count - a.count).slice(0, 12); // seen on 2 rows at least
  const out = [];
  for (let i = 0; i < c.length; i++) {
    for (let j = i + 1; j < c.length; j++) {
      for (let k = j + 1; k < c.length; k++) {
        const p = [c[i], c[j], c[k]], opposite = [dist(p[1], p[2]), dist(p[0], p[2]), dist(p[0], p[1])];
        const m = opposite.indexOf(Math.max(...opposite));
        const tl = p[m];
        let tr = p[(m + 1) % 3], bl = p[(m + 2) % 3];
        const ux = tr.x - tl.x, uy = tr.y - tl.y, vx = bl.x - tl.x, vy = bl.y - tl.y;
        const l1 = Math.hypot(ux, uy), l2 = Math.hypot(vx, vy), size = (tl.size + tr.size + bl.size) / 3;
        const cos = (ux * vx + uy * vy) / (l1 * l2), legs = Math.min(l1, l2) / Math.max(l1, l2);
        const sizes = Math.max(tl.size, tr.size, bl.size) / Math.min(tl.size, tr.size, bl.size);
        if (Math.abs(cos) > 0.3 || legs < 0.7 || sizes > 1.6 || Math.min(l1, l2) < 7 * size || Math.max(l1, l2) > 200 * size) continue;
        if (ux * vy - uy * vx < 0) [tr, bl] = [bl, tr];
        out.push({ tl, tr, bl, score: Math.abs(cos) + (1 - legs) + (sizes - 1) });
      }
    }
  }
  return out.sort((a, b) => a.score - b.score).slice(0, 5);
}

// ---- 4. Module size, measured along the lines between finders, gives the dimension (17 + 4 ×
// version). The grid is sampled for that version, then for the versions next to it and for the
// version the symbol itself states (version information, from version 7); each grid is read as
// is, then mirrored.
function readAt(bits, w, h, { tl, tr, bl }) {
  const sizes = [along(bits, w, h, tl, tr), along(bits, w, h, tr, tl), along(bits, w, h, tl, bl), along(bits, w, h, bl, tl)]
    .filter((s) => s > 0);
  const ms = sizes.length ? mean(sizes) : (tl.size + tr.size + bl.size) / 3;
  const modules = (dist(tl, tr) + dist(tl, bl)) / (2 * ms) + 7;
  const v0 = Math.round((modules - 17) / 4), queue = [v0, v0 + 1, v0 - 1], tried = new Set();
  while (queue.length) {
    const version = queue.shift();
    if (version < 1 || version > 40 || tried.has(version)) continue;
    tried.add(version);
    const dim = 17 + 4 * version, grid = sample(bits, w, h, tl, tr, bl, dim);
    for (const g of [grid, transpose(grid, dim)]) {
      const r = readGrid(g, dim);
      if (typeof r === "string") return r;
      if (r > 0) queue.unshift(r); // the symbol states another version
    }
  }
  return null;
}

// From a finder's centre towards another finder and away from it, the dark centre, light ring
// and dark ring end 3.5 modules out: both ways make 7 modules.
function along(bits, w, h, a, b) {
  const d = dist(a, b), dx = (b.x - a.x) / d, dy = (b.y - a.y) / d, limit = 6 * a.size;
  let sum = 0;
  for (const dir of [1, -1]) {
    let s = 0, k = 0;
    for (; k < limit; k++) {
      const X = Math.floor(a.x + dir * k * dx), Y = Math.floor(a.y + dir * k * dy);
      const dark = X >= 0 && Y >= 0 && X < w && Y < h && bits[Y * w + X] === 1;
      if (dark !== (s !== 1)) {
        if (s === 2) break;
        s++;
      }
    }
    if (s !== 2 || k >= limit) return NaN;
    sum += k - 0.5; // the first light pixel lies half a pixel past the edge on average
  }
  return sum / 7;
}

const transpose = (g, dim) => g.map((_, i) => g[(i % dim) * dim + Math.floor(i / dim)]);

// ---- 5. Perspective: module centres map to pixels through the projective map fixed by the three
// finder centres and the bottom-right alignment pattern (without one, the parallelogram's fourth
// corner).
function sample(bits, w, h, tl, tr, bl, dim) {
  const n = dim - 7, u = { x: (tr.x - tl.x) / n, y: (tr.y - tl.y) / n }, v = { x: (bl.x - tl.x) / n, y: (bl.y - tl.y) / n };
  let corner = [dim - 3.5, dim - 3.5], at = { x: tr.x + bl.x - tl.x, y: tr.y + bl.y - tl.y };
  if (dim > 21) {
    const guess = { x: tl.x + (n - 3) * (u.x + v.x), y: tl.y + (n - 3) * (u.y + v.y) };
    const found = alignment(bits, w, h, guess, u, v);
    if (found) { corner = [dim - 6.5, dim - 6.5]; at = found; }
  }
  const H = homography([[3.5, 3.5], [dim - 3.5, 3.5], [3.5, dim - 3.5], corner], [tl, tr, bl, at]);
  const grid = new Uint8Array(dim * dim);
  for (let y = 0; y < dim; y++) {
    for (let x = 0; x < dim; x++) {
      const mx = x + 0.5, my = y + 0.5, z = H[6] * mx + H[7] * my + 1;
      const X = Math.floor((H[0] * mx + H[1] * my + H[2]) / z), Y = Math.floor((H[3] * mx + H[4] * my + H[5]) / z);
      grid[y * dim + x] = X >= 0 && Y >= 0 && X < w && Y < h ? bits[Y * w + X] : 0;
    }
  }
  return grid;
}

// The alignment pattern (5×5 modules: dark centre, light ring, dark ring) near where the finders
// put it: the place where most of its 25 modules match, searched 4, 9 then 16 modules around (under
// perspective the guess is off); its centre is the middle of the best-matching places (nearest the
// guess if several).
function alignment(bits, w, h, guess, u, v) {
  const ms = (Math.hypot(u.x, u.y) + Math.hypot(v.x, v.y)) / 2, step = Math.max(1, ms / 4);
  const matches = (x, y, need) => { // how many of the 25 modules match, or less than `need`
    let misses = 0;
    for (let j = -2; j <= 2; j++) {
      for (let i = -2; i <= 2; i++) {
        const X = Math.floor(x + i * u.x + j * v.x), Y = Math.floor(y + i * u.y + j * v.y);
        const dark = X >= 0 && Y >= 0 && X < w && Y < h && bits[Y * w + X] === 1;
        if (dark !== (Math.max(Math.abs(i), Math.abs(j)) !== 1) && ++misses > 25 - need) return 0;
      }
    }
    return 25 - misses;
  };
  let inner = -1;
  for (const r of [4, 9, 16]) {
    const k = Math.ceil((r * ms) / step);
    let best = r < 16 ? 23 : 24, hits = [];
    for (let j = -k; j <= k; j++) {
      for (let i = -k; i <= k; i++) {
        if (Math.abs(i) <= inner && Math.abs(j) <= inner) continue; // searched already
        const x = guess.x + i * step, y = guess.y + j * step, s = matches(x, y, best);
        if (s > best) { best = s; hits = []; }
        if (s === best) hits.push({ x, y, d: Math.hypot(i, j) });
      }
    }
    inner = k;
    if (!hits.length) continue;
    const first = hits.reduce((a, b) => (b.d < a.d ? b : a));
    const near = hits.filter((p) => dist(p, first) <= ms);
    return { x: mean(near.map((p) => p.x)), y: mean(near.map((p) => p.y)) };
  }
  return null;
}

// The projective map taking four points (module coordinates) to four pixels: 8 unknowns,
// solved by Gauss–Jordan elimination.
function homography(src, dst) {
  const A = [];
  src.forEach(([x, y], i) => {
    const X = dst[i].x, Y = dst[i].y;
    A.push([x, y, 1, 0, 0, 0, -x * X, -y * X, X], [0, 0, 0, x, y, 1, -x * Y, -y * Y, Y]);
  });
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
    [A[c], A[p]] = [A[p], A[c]];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = A[r][c] / A[c][c];
      for (let k = c; k < 9; k++) A[r][k] -= f * A[c][k];
    }
  }
  return A.map((row, i) => row[8] / row[i]);
}

// ---- 6. The symbol's fixed parts. Format information: level and mask with a BCH(15,5) code,
// masked with 0x5412. Version information: BCH(18,6). Both are read as the nearest valid word.
const FORMATS = Array.from({ length: 32 }, (_, d) => {
  let r = d;
  for (let i = 0; i < 10; i++) r = (r << 1) ^ ((r >> 9) * 0x537);
  return ((d << 10) | r) ^ 0x5412;
});
const VERSIONS = Array.from({ length: 34 }, (_, i) => {
  let r = i + 7;
  for (let k = 0; k < 12; k++) r = (r << 1) ^ ((r >> 11) * 0x1f25);
  return ((i + 7) << 12) | r;
});
const LEVEL = [1, 0, 3, 2]; // the format's two level bits → index in L, M, Q, H
const MASKS = [
  (x, y) => (x + y) % 2 === 0,
  (x, y) => y % 2 === 0,
  (x, y) => x % 3 === 0,
  (x, y) => (x + y) % 3 === 0,
  (x, y) => (Math.floor(y / 2) + Math.floor(x / 3)) % 2 === 0,
  (x, y) => ((x * y) % 2) + ((x * y) % 3) === 0,
  (x, y) => (((x * y) % 2) + ((x * y) % 3)) % 2 === 0,
  (x, y) => (((x + y) % 2) + ((x * y) % 3)) % 2 === 0,
];
// Error correction codewords per block and number of blocks, by level (L, M, Q, H) and version 1–40.
const EC_PER_BLOCK = [
  [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
  [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
  [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30, 28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
  [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28, 30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
];
const BLOCKS = [
  [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
  [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
  [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20, 23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
  [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25, 25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
];

function nearest(words, codes) {
  let best = -1, bestDistance = 4; // up to 3 wrong bits
  codes.forEach((code, i) => words.forEach((word) => {
    let d = 0;
    for (let x = code ^ word; x; x &= x - 1) d++;
    if (d < bestDistance) { bestDistance = d; best = i; }
  }));
  return best;
}

function alignmentCentres(version) {
  if (version === 1) return [];
  const n = Math.floor(version / 7) + 2, last = 4 * version + 10;
  const step = version === 32 ? 26 : Math.ceil((4 * version + 4) / (2 * n - 2)) * 2;
  return [6, ...Array.from({ length: n - 1 }, (_, i) => last - (n - 2 - i) * step)];
}

// Modules that carry no data: finders with separators and format information, timing patterns,
// alignment patterns, version information.
const functionCache = new Map();
function functionModules(version) {
  if (functionCache.has(version)) return functionCache.get(version);
  const dim = 17 + 4 * version, f = new Uint8Array(dim * dim);
  const fill = (x0, y0, wd, ht) => { for (let y = y0; y < y0 + ht; y++) f.fill(1, y * dim + x0, y * dim + x0 + wd); };
  fill(0, 0, 9, 9); fill(dim - 8, 0, 8, 9); fill(0, dim - 8, 9, 8);
  fill(6, 0, 1, dim); fill(0, 6, dim, 1);
  const centres = alignmentCentres(version), last = centres.length - 1;
  centres.forEach((ay, j) => centres.forEach((ax, i) => {
    if ((i === 0 && j === 0) || (i === 0 && j === last) || (i === last && j === 0)) return; // under a finder
    fill(ax - 2, ay - 2, 5, 5);
  }));
  if (version >= 7) { fill(dim - 11, 0, 3, 6); fill(0, dim - 11, 6, 3); }
  functionCache.set(version, f);
  return f;
}

// The text, or null, or the version the symbol states when it is not the one sampled.
function readGrid(grid, dim) {
  const version = (dim - 17) / 4, bit = (x, y) => grid[y * dim + x];
  const word = (cells) => cells.reduce((v, [x, y]) => (v << 1) | bit(x, y), 0);
  if (version >= 7) {
    const cells = Array.from({ length: 18 }, (_, k) => [dim - 11 + ((17 - k) % 3), Math.floor((17 - k) / 3)]);
    const stated = nearest([word(cells), word(cells.map(([x, y]) => [y, x]))], VERSIONS) + 7;
    if (stated >= 7 && stated !== version) return stated;
  }
  const first = [[0, 8], [1, 8], [2, 8], [3, 8], [4, 8], [5, 8], [7, 8], [8, 8], [8, 7], [8, 5], [8, 4], [8, 3], [8, 2], [8, 1], [8, 0]];
  const second = [...Array.from({ length: 7 }, (_, i) => [8, dim - 1 - i]), ...Array.from({ length: 8 }, (_, i) => [dim - 8 + i, 8])];
  const format = nearest([word(first), word(second)], FORMATS);
  if (format < 0) return null;
  const level = LEVEL[format >> 3], masked = MASKS[format & 7];

  // ---- 7. Codewords: two-module columns from the bottom right, up then down, skipping the
  // vertical timing pattern, unmasking as they are read.
  const fn = functionModules(version);
  const total = (fn.length - fn.reduce((s, v) => s + v, 0)) >> 3, bytes = new Uint8Array(total);
  let n = 0;
  for (let right = dim - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let i = 0; i < dim; i++) {
      const y = (right + 1) & 2 ? i : dim - 1 - i;
      for (const x of [right, right - 1]) {
        if (fn[y * dim + x] || n >= total * 8) continue;
        if (bit(x, y) ^ masked(x, y)) bytes[n >> 3] |= 0x80 >> (n & 7);
        n++;
      }
    }
  }

  // ---- 8. Blocks: data codewords are interleaved first (shorter blocks first), then the error
  // correction codewords. Each block is corrected, and the data joined.
  const ec = EC_PER_BLOCK[level][version - 1], count = BLOCKS[level][version - 1];
  const data = total - ec * count, short = Math.floor(data / count), long = data % count;
  const blocks = Array.from({ length: count }, (_, b) => new Uint8Array(short + (b >= count - long ? 1 : 0) + ec));
  let k = 0;
  for (let i = 0; i <= short; i++) for (const b of blocks) if (i < b.length - ec) b[i] = bytes[k++];
  for (let i = 0; i < ec; i++) for (const b of blocks) b[b.length - ec + i] = bytes[k++];
  // The smallest symbols keep a few codewords for detecting wrong corrections (ISO/IEC 18004, table 9).
  const spare = version === 1 ? [3, 2, 1, 1][level] : level === 0 && version <= 3 ? 4 - version : 0;
  const out = [];
  for (const b of blocks) {
    if (!correct(b, ec, (ec - spare) >> 1)) return null;
    out.push(...b.subarray(0, b.length - ec));
  }
  return segments(out, version);
}

// ---- 9. Reed–Solomon over GF(256) (polynomial 0x11d; generator roots α⁰, α¹, …): syndromes,
// Berlekamp–Massey for the error locator Λ, Chien search for its roots, Forney for the values.
const EXP = new Uint8Array(512), LOG = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++, x = x & 0x80 ? (x << 1) ^ 0x11d : x << 1) { EXP[i] = EXP[i + 255] = x; LOG[x] = i; }
const mul = (a, b) => (a && b ? EXP[LOG[a] + LOG[b]] : 0);
const div = (a, b) => (a ? EXP[LOG[a] + 255 - LOG[b]] : 0);
const evaluate = (p, x) => p.reduceRight((y, c) => mul(y, x) ^ c, 0); // p[i] is the coefficient of xⁱ
const syndromes = (block, ec) => Array.from({ length: ec }, (_, j) => block.reduce((y, c) => mul(y, EXP[j]) ^ c, 0));

function correct(block, ec, maxErrors) {
  const S = syndromes(block, ec);
  if (S.every((s) => s === 0)) return true;
  let C = [1], B = [1], L = 0, m = 1, b = 1;
  for (let n = 0; n < ec; n++) {
    let d = S[n];
    for (let i = 1; i <= L; i++) d ^= mul(C[i] ?? 0, S[n - i]);
    if (d === 0) { m++; continue; }
    const T = C.slice(), f = div(d, b);
    while (C.length < B.length + m) C.push(0);
    for (let i = 0; i < B.length; i++) C[i + m] ^= mul(f, B[i]);
    if (2 * L <= n) { L = n + 1 - L; B = T; b = d; m = 1; } else m++;
  }
  if (L > maxErrors) return false;
  const omega = Array.from({ length: ec }, (_, i) => { // S(x)·Λ(x) mod x^ec
    let v = 0;
    for (let j = 0; j <= i && j < C.length; j++) v ^= mul(C[j], S[i - j]);
    return v;
  });
  const derivative = C.map((c, i) => (i % 2 ? c : 0)).slice(1);
  let fixed = 0;
  for (let i = 0; i < block.length; i++) {
    const inverse = EXP[(255 - i) % 255]; // X⁻¹ for an error at xⁱ, the (i+1)th codeword from the end
    if (evaluate(C, inverse) !== 0) continue;
    const den = evaluate(derivative, inverse);
    if (!den) return false;
    block[block.length - 1 - i] ^= mul(EXP[i], div(evaluate(omega, inverse), den));
    fixed++;
  }
  return fixed === L && syndromes(block, ec).every((s) => s === 0);
}

// ---- 10. Data segments. Bytes are read as UTF-8 (what phones and our labels write), else as
// ISO-8859-1 (the standard's default); ECI designators are skipped.
const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";

function segments(bytes, version) {
  const end = bytes.length * 8, size = version < 10 ? 0 : version < 27 ? 1 : 2;
  let pos = 0, text = "", pending = [];
  const read = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++, pos++) v = (v << 1) | (pos < end ? (bytes[pos >> 3] >> (7 - (pos & 7))) & 1 : 0);
    return v;
  };
  const flush = () => { text += utf8(pending); pending = []; };
  while (pos + 4 <= end) {
    const mode = read(4);
    if (mode === 0) break; // terminator
    if (mode === 1) { // numeric: 3 digits in 10 bits, a last 2 in 7 or 1 in 4
      for (let n = read([10, 12, 14][size]); n > 0; n -= 3) {
        const digits = Math.min(n, 3), v = read([0, 4, 7, 10][digits]);
        if (v >= 10 ** digits) return null;
        for (const ch of String(v).padStart(digits, "0")) pending.push(ch.charCodeAt(0));
      }
    } else if (mode === 2) { // alphanumeric: 2 characters in 11 bits, a last one in 6
      for (let n = read([9, 11, 13][size]); n > 0; n -= 2) {
        const v = read(n > 1 ? 11 : 6);
        if (v >= (n > 1 ? 45 * 45 : 45)) return null;
        if (n > 1) pending.push(ALPHANUMERIC.charCodeAt(Math.floor(v / 45)));
        pending.push(ALPHANUMERIC.charCodeAt(v % 45));
      }
    } else if (mode === 4) { // bytes
      for (let n = read([8, 16, 16][size]); n > 0; n--) pending.push(read(8));
    } else if (mode === 8) { // kanji: a Shift JIS character in 13 bits
      const sjis = [];
      for (let n = read([8, 10, 12][size]); n > 0; n--) {
        const v = read(13), c = ((Math.floor(v / 0xc0) << 8) | (v % 0xc0));
        const code = c + (c < 0x1f00 ? 0x8140 : 0xc140);
        sjis.push(code >> 8, code & 0xff);
      }
      flush();
      try { text += new TextDecoder("shift_jis").decode(new Uint8Array(sjis)); } catch { return null; }
    } else if (mode === 7) { // ECI: a 1 to 3 byte designator, ignored
      const first = read(8);
      read(first < 0x80 ? 0 : first < 0xc0 ? 8 : 16);
    } else if (mode === 3) read(16); // structured append: position, count, parity
    else if (mode === 9) read(8); // FNC1 in second position: application indicator
    else if (mode !== 5) return null; // (FNC1 in first position has no data)
    if (pos > end) return null;
  }
  flush();
  return text;
}

function utf8(bytes) {
  const b = new Uint8Array(bytes);
  try { return new TextDecoder("utf-8", { fatal: true }).decode(b); } catch { return String.fromCharCode(...b); }
}
