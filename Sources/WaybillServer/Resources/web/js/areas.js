// Area fields (input[data-area-search] with a datalist): as a person types, the datalist offers
// the areas whose name in any language starts with what they typed (GET /app/areas). The form
// still works without it: the server resolves the typed name itself.

const timers = new WeakMap();

async function suggest(input) {
  const q = input.value.trim();
  const list = document.getElementById(input.getAttribute("list"));
  if (!list || q.length < 2 || q.includes("(")) return;
  try {
    const response = await fetch("/app/areas?q=" + encodeURIComponent(q), { credentials: "same-origin" });
    if (!response.ok) return;
    const { items } = await response.json();
    list.replaceChildren(...items.map((item) => {
      const option = document.createElement("option");
      option.value = `${item.name} (${item.level}${item.path ? ", " + item.path : ""})`;
      return option;
    }));
  } catch { /* offline: the server resolves the name on submit */ }
}

document.addEventListener("input", (event) => {
  const input = event.target.closest?.("input[data-area-search]");
  if (!input) return;
  clearTimeout(timers.get(input));
  timers.set(input, setTimeout(() => suggest(input), 150));
});
