// Waybill signature pad: <canvas data-signature-pad> draws with pointer events; every finished
// stroke writes a PNG data URL into <input data-signature-output>; [data-signature-clear] empties it;
// submitting the form without a signature shows form[data-empty-signature] in [data-signature-error].

const INK = "#111827";
const PAPER = "#ffffff";

function setup(canvas) {
  const form = canvas.closest("form");
  const scope = form ?? document;
  const output = scope.querySelector("[data-signature-output]");
  const clearButton = scope.querySelector("[data-signature-clear]");
  const error = scope.querySelector("[data-signature-error]");
  // Strokes are kept in the canvas's own coordinates (its width/height attributes), so the
  // drawing survives any resize and exports at a fixed size.
  const W = canvas.width || 600;
  const H = canvas.height || 240;
  const LINE = Math.max(2, W / 220);
  const strokes = [];
  let current = null;
  let pointerId = null;
  const ctx = canvas.getContext("2d");
  let scale = 1;

  Object.assign(canvas.style, { touchAction: "none", width: "100%", maxWidth: W + "px", height: "auto", aspectRatio: `${W} / ${H}` });
  if (!canvas.hasAttribute("tabindex")) canvas.tabIndex = 0;

  function paint(c, strokeList, k) {
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.fillStyle = PAPER;
    c.fillRect(0, 0, c.canvas.width, c.canvas.height);
    c.setTransform(k, 0, 0, k, 0, 0);
    for (const s of strokeList) drawStroke(c, s, 0);
  }

  function style(c) {
    c.strokeStyle = INK;
    c.fillStyle = INK;
    c.lineWidth = LINE;
    c.lineCap = "round";
    c.lineJoin = "round";
  }

  // Draws the stroke from point index `from` on, as quadratic curves through the midpoints.
  function drawStroke(c, s, from) {
    style(c);
    if (s.length === 1) {
      c.beginPath();
      c.arc(s[0].x, s[0].y, LINE / 2, 0, Math.PI * 2);
      c.fill();
      return;
    }
    const mid = (a, b) => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });
    c.beginPath();
    const start = Math.max(1, from);
    const first = start === 1 ? s[0] : mid(s[start - 2], s[start - 1]);
    c.moveTo(first.x, first.y);
    for (let i = start; i < s.length; i++) {
      const m = mid(s[i - 1], s[i]);
      c.quadraticCurveTo(s[i - 1].x, s[i - 1].y, m.x, m.y);
    }
    c.stroke();
  }

  function resize() {
    const rect = canvas.getBoundingClientRect();
    if (!rect.width) return;
    const dpr = window.devicePixelRatio || 1;
    const width = Math.round(rect.width * dpr);
    const height = Math.round(rect.height * dpr);
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    scale = width / W;
    paint(ctx, strokes, scale);
  }

  function point(e) {
    const rect = canvas.getBoundingClientRect();
    return { x: ((e.clientX - rect.left) / rect.width) * W, y: ((e.clientY - rect.top) / rect.height) * H };
  }

  function exportImage() {
    if (!output) return;
    if (!strokes.length) { output.value = ""; return; }
    const out = document.createElement("canvas");
    out.width = W;
    out.height = H;
    paint(out.getContext("2d"), strokes, 1);
    output.value = out.toDataURL("image/png");
    output.dispatchEvent(new Event("change", { bubbles: true }));
  }

  canvas.addEventListener("pointerdown", (e) => {
    if (pointerId !== null || (e.pointerType === "mouse" && e.button !== 0)) return;
    e.preventDefault();
    pointerId = e.pointerId;
    canvas.setPointerCapture(e.pointerId);
    current = [point(e)];
    strokes.push(current);
    ctx.setTransform(scale, 0, 0, scale, 0, 0);
    drawStroke(ctx, current, 0);
    if (error) error.hidden = true;
  });

  canvas.addEventListener("pointermove", (e) => {
    if (e.pointerId !== pointerId || !current) return;
    const from = current.length;
    for (const ev of e.getCoalescedEvents?.() ?? [e]) current.push(point(ev));
    ctx.setTransform(scale, 0, 0, scale, 0, 0);
    drawStroke(ctx, current, from);
  });

  const end = (e) => {
    if (e.pointerId !== pointerId) return;
    pointerId = null;
    current = null;
    if (canvas.hasPointerCapture(e.pointerId)) canvas.releasePointerCapture(e.pointerId);
    exportImage();
  };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);

  clearButton?.addEventListener("click", () => {
    strokes.length = 0;
    current = null;
    pointerId = null;
    paint(ctx, strokes, scale);
    exportImage();
    canvas.focus();
  });

  form?.addEventListener("submit", (e) => {
    if (strokes.length) return;
    e.preventDefault();
    if (error) {
      error.textContent = form.dataset.emptySignature || error.textContent;
      error.hidden = false;
    }
    canvas.focus();
  });

  new ResizeObserver(resize).observe(canvas);
  // A zoom or a move to another screen changes the pixel ratio without resizing the box.
  const watchRatio = () => matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`)
    .addEventListener("change", () => { resize(); watchRatio(); }, { once: true });
  watchRatio();
  resize();
}

for (const canvas of document.querySelectorAll("canvas[data-signature-pad]")) setup(canvas);
