// The Scan page's camera: where the browser has BarcodeDetector (Chrome on Android, Safari 17+),
// the camera reads the label's QR code and sends the form; elsewhere the typed field stays, which
// always works. Nothing is sent anywhere but this server's own form.

const box = document.querySelector("[data-scanner]");
const form = document.getElementById("scan-form");

async function start(video) {
  const detector = new BarcodeDetector({ formats: ["qr_code", "code_128"] });
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false });
  video.srcObject = stream;
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

if (box && form && "BarcodeDetector" in window && navigator.mediaDevices?.getUserMedia) {
  box.hidden = false;
  box.querySelector("[data-scanner-start]").addEventListener("click", () => {
    start(box.querySelector("[data-scanner-video]")).catch(() => { box.hidden = true; });
  });
}
