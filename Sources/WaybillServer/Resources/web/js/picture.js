// Profile pictures are square: input[type=file][data-crop-square] crops the chosen image to its
// centred square (at most 512 pixels a side) in the browser before the form sends it. Without
// JavaScript the server refuses an image that is not square, and says so.

const SIDE = 512;

async function crop(input) {
  const file = input.files?.[0];
  if (!file || !file.type.startsWith("image/")) return;
  let bitmap;
  try { bitmap = await createImageBitmap(file); } catch { return; }
  const side = Math.min(bitmap.width, bitmap.height);
  const out = Math.min(side, SIDE);
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = out;
  canvas.getContext("2d").drawImage(bitmap, (bitmap.width - side) / 2, (bitmap.height - side) / 2, side, side, 0, 0, out, out);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.9));
  if (!blob) return;
  const cropped = new DataTransfer();
  cropped.items.add(new File([blob], "picture.jpg", { type: "image/jpeg" }));
  input.files = cropped.files;
  input.dataset.cropped = "1";
}

document.addEventListener("change", (event) => {
  const input = event.target.closest?.("input[type=file][data-crop-square]");
  if (input && input.dataset.cropped !== "1") crop(input);
  else if (input) delete input.dataset.cropped;
});
