// Checks a Waybill webhook delivery (docs/integrations.md) with Web Crypto: Node 18+, Deno, Bun,
// Cloudflare Workers and browsers alike.
//
//     node verify-webhook.mjs SECRET SIGNATURE_HEADER < body.json   # prints "valid" or "invalid: why"

/** Throws unless `header` (Waybill-Signature) signs `body` (the exact bytes received, a Uint8Array). */
export async function verifyWaybillSignature(body, header, secret, toleranceSeconds = 300) {
  let timestamp = null;
  const signatures = [];
  for (const part of header.split(",")) {
    const [key, ...rest] = part.trim().split("=");
    const value = rest.join("=");
    if (key === "t") timestamp = value;
    else if (key === "v1") signatures.push(value);
  }
  if (!timestamp || !/^\d+$/.test(timestamp) || signatures.length === 0) throw new Error("malformed Waybill-Signature header");
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const prefix = encoder.encode(timestamp + ".");
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix, 0);
  message.set(body, prefix.length);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  const expected = Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
  // Constant time: every character of every candidate is compared.
  const matches = signatures.some((s) => {
    if (s.length !== expected.length) return false;
    let diff = 0;
    for (let i = 0; i < s.length; i++) diff |= s.charCodeAt(i) ^ expected.charCodeAt(i);
    return diff === 0;
  });
  if (!matches) throw new Error("no signature matches");
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) throw new Error("timestamp outside the tolerance (a replay?)");
}

if (typeof process !== "undefined" && process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const body = new Uint8Array(Buffer.concat(chunks));
  try {
    await verifyWaybillSignature(body, process.argv[3], process.argv[2]);
    console.log("valid");
  } catch (error) {
    console.log(`invalid: ${error.message}`);
    process.exit(1);
  }
}
