// The Scan page's camera: where the browser has BarcodeDetector (Chrome on Android, Safari 17+),
// the camera reads the label's QR code and sends the form; elsewhere (Firefox, desktop Chrome on
// Linux, older Safari) our own reader, qr-decode.js, reads a few frames a second; it is loaded
// only then. The typed field stays, which always works. Nothing is sent anywhere but this
// server's own form.

const box = document.querySelector("[data-scanner]");
const form = document.getElementById("scan-form");

// Frames for our own reader: at most 800 pixels a side is plenty for a label held up to the
// camera and keeps a read near 10 ms; four a second is quick enough to feel instant.
const SIDE = 800;
const EVERY_MS = 250;

async function start(video) {
  const detector = new BarcodeDetector({ formats: ["qr_code", "code_128"] });
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false });
  video.srcObject = stream;
  video.hidden = false;
  await video.play();
  const stop = () => stream.getTracks().forEach((t) => t.stop());
  const tick = async () => {
    if (!video.srcObject) return;
    try {
      const codes = await detector.detect(video);
      const label = codes.find((c) => c.format === "qr_code") || codes[0];
      if (label && label.rawValue) {
        stop();
        form.elements.code.value = label.rawValue;
        form.requestSubmit();
        return;
      }
    } catch { /* a frame not ready yet */ }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

async function startOwnReader(video) {
  // Fetched while the browser asks for the camera; the same ?v= as this file, so it is cached as long.
  const reader = import(`./qr-decode.js${new URL(import.meta.url).search}`);
  reader.catch(() => {}); // a failed load is handled below, unless the camera was refused first
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false });
  const stop = () => stream.getTracks().forEach((t) => t.stop());
  let decodeQR;
  try {
    video.srcObject = stream;
    video.hidden = false;
    await video.play();
    ({ decodeQR } = await reader);
  } catch (error) {
    stop();
    throw error;
  }
  const canvas = document.createElement("canvas");
  const context = canvas.getContext("2d", { willReadFrequently: true });
  const tick = () => {
    if (!video.srcObject) return;
    const scale = Math.min(1, SIDE / Math.max(video.videoWidth, video.videoHeight));
    const width = Math.round(video.videoWidth * scale), height = Math.round(video.videoHeight * scale);
    if (width && height) {
      if (canvas.width !== width || canvas.height !== height) Object.assign(canvas, { width, height });
      let text = null;
      try {
        context.drawImage(video, 0, 0, width, height);
        text = decodeQR(context.getImageData(0, 0, width, height));
      } catch { /* a frame not ready yet */ }
      if (text) {
        stop();
        form.elements.code.value = text;
        form.requestSubmit();
        return;
      }
    }
    setTimeout(tick, EVERY_MS);
  };
  tick();
}

if (box && form && navigator.mediaDevices?.getUserMedia) {
  const read = "BarcodeDetector" in window ? start : startOwnReader;
  box.hidden = false;
  box.querySelector("[data-scanner-start]").addEventListener("click", () => {
    read(box.querySelector("[data-scanner-video]")).catch(() => { box.hidden = true; });
  });
}
