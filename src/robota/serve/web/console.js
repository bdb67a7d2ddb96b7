// The Robota web console (issue 31, item 4). Vanilla JS, no dependencies, no build step.
// Everything a model or a tool produced is inserted with textContent, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const state = { agent: null, session: null, running: false };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function newSessionId() {
    const bytes = new Uint8Array(8);
    crypto.getRandomValues(bytes);
    return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function show(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  function setStatus(text) { $("status").textContent = text; }

  function scroll() { const log = $("log"); log.scrollTop = log.scrollHeight; }

  function append(node) { $("log").appendChild(node); scroll(); return node; }

  function agentPath(rest) {
    return "/agents/" + encodeURIComponent(state.agent) + rest;
  }

  function sessionPath(rest) {
    return agentPath("/sessions/" + encodeURIComponent(state.session) + rest);
  }

  async function errorText(response) {
    try {
      const body = await response.json();
      if (body && body.error && body.error.message) return body.error.message;
    } catch (e) { /* not JSON */ }
    return "HTTP " + response.status;
  }

  function setSession(id) {
    state.session = id;
    $("session-id").textContent = id;
    for (const item of $("sessions").children) {
      item.classList.toggle("current", item.dataset.session === id);
    }
  }

  async function loadSessions() {
    if (!state.agent) return;
    const response = await fetch(agentPath("/sessions"));
    if (!response.ok) return;
    const body = await response.json();
    const list = $("sessions");
    list.replaceChildren();
    for (const session of body.sessions || []) {
      const item = el("li");
      item.dataset.session = session.id;
      const button = el("button", null, session.id);
      button.type = "button";
      button.addEventListener("click", () => {
        setSession(session.id);
        $("log").replaceChildren();
        append(el("p", "usage", "Continuing session " + session.id));
      });
      item.appendChild(button);
      if (session.id === state.session) item.classList.add("current");
      list.appendChild(item);
    }
  }

  async function loadAgents() {
    const response = await fetch("/console/agents");
    const body = await response.json();
    const select = $("agent");
    for (const name of body.agents) {
      const option = el("option", null, name);
      option.value = name;
      select.appendChild(option);
    }
    state.agent = select.value;
    $("inspect").hidden = !body.journal;
    select.addEventListener("change", () => {
      state.agent = select.value;
      setSession(newSessionId());
      $("log").replaceChildren();
      loadSessions();
    });
  }

  // One turn's view: the assistant's text blocks, tool cards, asks and the usage line.
  function turnView() {
    const texts = new Map();
    const tools = new Map();

    function tool(id, name) {
      let card = tools.get(id);
      if (!card) {
        card = append(el("div", "tool"));
        card.dataset.toolCallId = id;
        card.appendChild(el("div", "label", "Tool call: " + (name || "?")));
        card.input = card.appendChild(el("div", "input"));
        card.output = card.appendChild(el("div", "output"));
        tools.set(id, card);
      }
      return card;
    }

    async function answer(box, id, approved) {
      for (const button of box.querySelectorAll("button")) button.disabled = true;
      const response = await fetch(sessionPath("/approvals/" + encodeURIComponent(id)), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ approved: approved }),
      });
      const verdict = response.ok ? (approved ? "Approved" : "Denied") : await errorText(response);
      box.appendChild(el("div", "verdict", verdict));
    }

    function permission(part) {
      const data = part.data || {};
      const box = append(el("div", "permission"));
      box.dataset.askId = part.id;
      box.appendChild(el("div", "label", "Permission requested: " + show(data.tool)));
      box.appendChild(el("pre", null, show(data.arguments)));
      if (data.reason) box.appendChild(el("div", null, show(data.reason)));
      const approve = box.appendChild(el("button", "approve", "Approve"));
      const deny = box.appendChild(el("button", "deny", "Deny"));
      approve.type = deny.type = "button";
      approve.addEventListener("click", () => answer(box, part.id, true));
      deny.addEventListener("click", () => answer(box, part.id, false));
    }

    function usageLine(meta) {
      const usage = (meta && meta.usage) || {};
      const cost = meta && typeof meta.cost === "number" ? "$" + meta.cost.toFixed(6) : "cost unknown";
      const line = "Turn " + show(meta && meta.status) + " · model " + show(meta && meta.model) +
        " · tokens in " + show(usage.inputTokens) + ", out " + show(usage.outputTokens) +
        ", total " + show(usage.totalTokens) + " · " + cost;
      append(el("div", "usage", line));
    }

    return function onPart(part) {
      switch (part.type) {
        case "text-start":
          texts.set(part.id, append(el("div", "msg assistant", "")));
          break;
        case "text-delta": {
          const node = texts.get(part.id) || append(el("div", "msg assistant", ""));
          texts.set(part.id, node);
          node.textContent += part.delta;
          scroll();
          break;
        }
        case "tool-input-start":
          tool(part.toolCallId, part.toolName);
          break;
        case "tool-input-available":
          tool(part.toolCallId, part.toolName).input.textContent = "input: " + show(part.input);
          break;
        case "tool-output-available":
          tool(part.toolCallId).output.textContent = "result: " + show(part.output);
          break;
        case "tool-output-error": {
          const card = tool(part.toolCallId);
          card.classList.add("error");
          card.output.textContent = "error: " + show(part.errorText);
          break;
        }
        case "data-permission-request":
          permission(part);
          break;
        case "data-retry":
          setStatus("Retrying the model call…");
          break;
        case "finish":
          usageLine(part.messageMetadata);
          break;
        case "error":
          append(el("div", "error-line", "Error: " + show(part.errorText)));
          break;
        default:
          break;
      }
    };
  }

  // Reads an SSE body: events are separated by a blank line; only data: fields matter here.
  async function readStream(response, onData) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
        if (data) onData(data);
      }
    }
  }

  function setRunning(running) {
    state.running = running;
    $("send").disabled = running;
    $("cancel").disabled = !running;
  }

  async function send(text) {
    append(el("div", "msg user", text));
    setRunning(true);
    setStatus("Running…");
    const onPart = turnView();
    try {
      const response = await fetch(agentPath("/chat"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id: state.session,
          messages: [{ role: "user", parts: [{ type: "text", text: text }] }],
        }),
      });
      if (!response.ok) {
        append(el("div", "error-line", "Error: " + await errorText(response)));
        return;
      }
      loadSessions();
      await readStream(response, (data) => {
        if (data === "[DONE]") return;
        try { onPart(JSON.parse(data)); } catch (e) { /* a malformed part is skipped */ }
      });
    } catch (e) {
      append(el("div", "error-line", "Connection error: " + String(e)));
    } finally {
      setRunning(false);
      setStatus("Ready.");
      loadSessions();
    }
  }

  // The journal inspector: one execution's records, each a kind and a one-line summary.
  function showChat(visible) {
    $("log").hidden = !visible;
    $("composer").hidden = !visible;
    $("execution").hidden = visible;
  }

  async function inspect(id) {
    const records = $("records");
    records.replaceChildren();
    $("execution-title").textContent = "Execution " + id;
    showChat(false);
    const response = await fetch("/console/executions/" + encodeURIComponent(id));
    if (!response.ok) {
      records.appendChild(el("li", "error-line", "Error: " + await errorText(response)));
      return;
    }
    const body = await response.json();
    for (const record of body.records) {
      const item = el("li");
      item.dataset.kind = record.kind;
      item.appendChild(el("span", "kind", record.kind));
      item.appendChild(el("span", "summary", record.summary));
      records.appendChild(item);
    }
  }

  function wire() {
    $("composer").addEventListener("submit", (event) => {
      event.preventDefault();
      const text = $("input").value;
      if (!text.trim() || state.running) return;
      $("input").value = "";
      send(text);
    });
    $("input").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        $("composer").requestSubmit();
      }
    });
    $("cancel").addEventListener("click", () => {
      fetch(sessionPath("/cancel"), { method: "POST" });
    });
    $("inspect").addEventListener("submit", (event) => {
      event.preventDefault();
      const id = $("execution-id").value.trim();
      if (id) inspect(id);
    });
    $("execution-close").addEventListener("click", () => showChat(true));
    $("new-session").addEventListener("click", () => {
      setSession(newSessionId());
      $("log").replaceChildren();
      loadSessions();
    });
  }

  document.addEventListener("DOMContentLoaded", async () => {
    wire();
    setSession(newSessionId());
    await loadAgents();
    await loadSessions();
    setStatus("Ready.");
  });
})();
