// poppy-tui web: a little plain JavaScript, none of it needed to decide (every control is a form
// POST). It keeps the page live (server-sent events: the page fetches itself again when the store
// changes), counts down, holds Approve for the arming delay, and runs the passkey step.
"use strict";

function countdown(seconds) {
  // The TUI's countdown (agent/status_words.py): '4m 05s', '2h 03m', '3d 04h', 'expired'.
  if (seconds <= 0) return "expired";
  const total = Math.floor(seconds);
  const days = Math.floor(total / 86400), hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60), secs = total % 60;
  const two = (n) => String(n).padStart(2, "0");
  if (days) return days + "d " + two(hours) + "h";
  if (hours) return hours + "h " + two(minutes) + "m";
  if (minutes) return minutes + "m " + two(secs) + "s";
  return secs + "s";
}

function tick() {
  for (const el of document.querySelectorAll("[data-until]")) {
    const left = (Date.parse(el.dataset.until) - Date.now()) / 1000;
    el.textContent = left <= 0 && el.dataset.expired ? el.dataset.expired : countdown(left);
  }
}

function arm() {
  for (const button of document.querySelectorAll("button[data-arm]")) {
    if (button.dataset.armed) continue;
    button.dataset.armed = "1";
    const label = button.textContent;
    const until = Date.now() + parseFloat(button.dataset.arm) * 1000;
    button.setAttribute("aria-disabled", "true");
    const step = () => {
      const left = (until - Date.now()) / 1000;
      if (left <= 0) {
        button.removeAttribute("aria-disabled");
        button.textContent = label;
        return;
      }
      button.textContent = label + " (available in " + left.toFixed(1) + " s)";
      setTimeout(step, 100);
    };
    button.addEventListener("click", (event) => {
      if (button.getAttribute("aria-disabled") === "true") event.preventDefault();
    });
    step();
  }
}

let refreshing = null;
async function refresh() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    const live = document.getElementById("live");
    const confirm = document.getElementById("confirm");
    const url = confirm ? confirm.dataset.watch : location.pathname + location.search;
    if (!live && !confirm) return;
    const answer = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (answer.status === 403) { location.reload(); return; }
    if (!answer.ok) return;
    const page = new DOMParser().parseFromString(await answer.text(), "text/html");
    const fresh = page.getElementById("live");
    if (!fresh) { location.reload(); return; }
    if (confirm) {
      // A new revision or another status while confirming: back to the review, which says so.
      if (fresh.dataset.revision !== confirm.dataset.revision || fresh.dataset.status !== confirm.dataset.status) {
        location.assign(confirm.dataset.watch + "?said=changed");
      }
      return;
    }
    if (fresh.innerHTML === live.innerHTML) return;  // nothing new: leave the page (and focus) alone
    const focused = document.activeElement && document.activeElement.id;
    live.replaceWith(fresh);
    document.title = page.title;
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
    arm();
    tick();
  })();
  try { await refreshing; } finally { refreshing = null; }
}

function listen() {
  if (!document.body.dataset.live || !window.EventSource) return;
  const events = new EventSource("/events");
  events.addEventListener("change", refresh);
  events.addEventListener("revoked", () => { events.close(); location.reload(); });
  events.onerror = () => {
    // The server went away or refused the stream: look again soon (a revoked device is shown
    // the "not paired" page; a restarted server is found again).
    if (events.readyState === EventSource.CLOSED) setTimeout(() => location.reload(), 2000);
  };
  // While a grace period counts down on the review, its banner is fetched every second.
  setInterval(() => {
    const live = document.getElementById("live");
    if (live && live.dataset.ticking) refresh();
  }, 1000);
}

// ---- passkeys (WebAuthn) ---------------------------------------------------------------------

function fromBase64url(text) {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}
function toBase64url(buffer) {
  let text = "";
  for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
async function postJson(url, csrf, body) {
  const answer = await fetch(url, {
    method: "POST", credentials: "same-origin", cache: "no-store",
    headers: { "content-type": "application/json", "x-csrf-token": csrf },
    body: JSON.stringify(body || {}),
  });
  const data = await answer.json();
  if (!answer.ok) throw new Error(data.error || "refused");
  return data;
}
function showError(message) {
  const el = document.getElementById("passkey-error");
  if (el) { el.textContent = message; el.hidden = false; }
}

function passkeyApproval() {
  const form = document.querySelector("form[data-passkey]");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    if (form.dataset.signed) return;
    event.preventDefault();
    try {
      const csrf = form.elements.csrf.value;
      const options = await postJson(form.dataset.passkey + "/options", csrf, { revision_id: form.elements.revision_id.value });
      const credential = await navigator.credentials.get({ publicKey: {
        challenge: fromBase64url(options.challenge),
        rpId: options.rpId,
        timeout: options.timeout,
        userVerification: "required",
        allowCredentials: options.allowCredentials.map((c) => ({ type: "public-key", id: fromBase64url(c.id) })),
      } });
      form.elements.assertion.value = JSON.stringify({
        id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type,
        response: {
          clientDataJSON: toBase64url(credential.response.clientDataJSON),
          authenticatorData: toBase64url(credential.response.authenticatorData),
          signature: toBase64url(credential.response.signature),
          userHandle: credential.response.userHandle ? toBase64url(credential.response.userHandle) : null,
        },
      });
      form.dataset.signed = "1";
      form.submit();
    } catch (error) {
      showError("The passkey step did not complete (" + error.message + "). Nothing was approved.");
    }
  });
}

function passkeySetup() {
  const button = document.getElementById("passkey-add");
  if (!button) return;
  button.addEventListener("click", async () => {
    try {
      const csrf = button.dataset.csrf;
      const options = await postJson("/passkey/options", csrf);
      const credential = await navigator.credentials.create({ publicKey: {
        challenge: fromBase64url(options.challenge),
        rp: options.rp,
        user: { id: fromBase64url(options.user.id), name: options.user.name, displayName: options.user.displayName },
        pubKeyCredParams: options.pubKeyCredParams,
        timeout: options.timeout,
        authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
        attestation: "none",
      } });
      await postJson("/passkey/register", csrf, {
        id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type,
        response: {
          clientDataJSON: toBase64url(credential.response.clientDataJSON),
          attestationObject: toBase64url(credential.response.attestationObject),
        },
      });
      location.assign("/");
    } catch (error) {
      showError("The passkey was not added (" + error.message + ").");
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  tick();
  setInterval(tick, 1000);
  arm();
  listen();
  passkeyApproval();
  passkeySetup();
});
