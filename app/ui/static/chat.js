// The chat page: conversations kept in this browser, answers streamed from POST /chat/stream.
(function () {
  "use strict";
  const { el, sseEvents, formatMs, errorDetail, icon } = window.Deskmate;
  const { renderMarkdown } = window.DeskmateMarkdown;

  const STEP_LABELS = {
    redact: "Checking for secrets", classify: "Understanding the message", embed_query: "Preparing the search",
    retrieve: "Searching the knowledge base", decide: "Deciding what to do", check_status: "Checking the status page",
    answer: "Writing the answer", clarify: "Asking a question back", troubleshoot: "Preparing the next step",
    ticket: "Preparing a ticket", search_tickets: "Looking up your tickets", use_integration: "Looking it up", respond: "Done",
    converse: "Replying", translate: "Translating your message", localize: "Translating the reply",
  };
  const OS_NAMES = { windows: "Windows", macos: "macOS", linux: "Linux" };
  const MAX_SESSIONS = 30;
  const MAX_STORED_MESSAGES = 100;

  const messages = document.getElementById("messages");
  const welcome = document.getElementById("welcome");
  const composer = document.getElementById("composer");
  const input = document.getElementById("message");
  const sendButton = document.getElementById("send");
  const osSelect = document.getElementById("os-select");
  const sessionList = document.getElementById("session-list");
  const incidents = document.getElementById("incidents");

  let sessionId = null;
  let busy = false;

  // --- storage ----------------------------------------------------------------------------------------
  const store = {
    sessions() {
      try { return JSON.parse(localStorage.getItem("deskmate.sessions") || "[]"); } catch (_) { return []; }
    },
    saveSessions(list) { localStorage.setItem("deskmate.sessions", JSON.stringify(list.slice(0, MAX_SESSIONS))); },
    messages(id) {
      try { return JSON.parse(localStorage.getItem(`deskmate.chat.${id}`) || "[]"); } catch (_) { return []; }
    },
    append(id, message) {
      const list = store.messages(id);
      list.push(message);
      try {
        localStorage.setItem(`deskmate.chat.${id}`, JSON.stringify(list.slice(-MAX_STORED_MESSAGES)));
      } catch (_) { /* storage full: the conversation still works, it is just not kept */ }
    },
    touch(id, title) {
      const list = store.sessions().filter((s) => s.id !== id);
      const old = store.sessions().find((s) => s.id === id);
      list.unshift({ id, title: (old && old.title) || title, updated: new Date().toISOString() });
      const dropped = list.slice(MAX_SESSIONS);
      dropped.forEach((s) => localStorage.removeItem(`deskmate.chat.${s.id}`));
      store.saveSessions(list);
    },
  };

  // --- operating system ---------------------------------------------------------------------------------
  function detectedOs() {
    const agent = navigator.userAgent || "";
    if (/Windows/i.test(agent)) return "windows";
    if (/Macintosh|Mac OS X/i.test(agent)) return "macos";
    if (/Linux|X11|CrOS/i.test(agent)) return "linux";
    return null;
  }
  osSelect.value = localStorage.getItem("deskmate.os") || "auto";
  const detected = detectedOs();
  if (detected) osSelect.options[0].textContent = `Detect automatically (${OS_NAMES[detected]})`;
  osSelect.addEventListener("change", () => localStorage.setItem("deskmate.os", osSelect.value));

  /** The picker names the OS deskmate answered for (it may have read "on my Mac" in the message). */
  function showAssumedOs(userOs) {
    const shown = OS_NAMES[userOs] ? userOs : detected;
    osSelect.options[0].textContent = shown ? `Detect automatically (${OS_NAMES[shown]})` : "Detect automatically";
    osSelect.title = OS_NAMES[userOs] ? `The last answer was for ${OS_NAMES[userOs]}` : "";
  }

  function osForRequest(firstMessage) {
    if (osSelect.value !== "auto") return osSelect.value; // said explicitly: every message
    return firstMessage ? detected : null; // detected: once, so "I'm on Linux" in the chat can still change it
  }

  // --- sessions sidebar -----------------------------------------------------------------------------------
  function renderSessions() {
    sessionList.replaceChildren(...store.sessions().map((s) => el("li", {},
      el("button", {
        type: "button", class: "session" + (s.id === sessionId ? " active" : ""), title: s.title,
        onclick: () => openSession(s.id),
      }, el("span", { class: "session-title" }, s.title),
      el("span", { class: "session-time muted" }, new Date(s.updated).toLocaleString(undefined,
        { dateStyle: "short", timeStyle: "short" }))))));
  }

  function openSession(id) {
    if (busy) return;
    sessionId = id;
    messages.replaceChildren();
    incidents.replaceChildren();
    const stored = id ? store.messages(id) : [];
    welcome.hidden = stored.length > 0;
    messages.append(welcome);
    stored.forEach((m, i) => {
      if (m.role === "user") messages.append(userMessage(m.text));
      else messages.append(assistantMessage(m.envelope, m.steps || [], i === stored.length - 1));
    });
    const answered = stored.filter((m) => m.role === "assistant").pop();
    showAssumedOs(answered ? answered.envelope.user_os : null);
    renderSessions();
    scrollDown();
    input.focus();
  }

  document.getElementById("new-chat").addEventListener("click", () => openSession(null));

  // --- sources ------------------------------------------------------------------------------------------
  function sourceList(sources, key) {
    const list = el("ol", { class: "sources" });
    for (const s of sources) {
      const label = s.section ? `${s.title} › ${s.section}` : s.title;
      const anchor = el("span", { class: "source-title" }, label);
      const item = el("li", { id: `src-${key}-${s.n}`, value: s.n }, anchor,
        el("span", { class: "source-path muted" }, ` — ${s.source}`));
      list.append(item);
      if (/^https?:\/\//i.test(s.source)) { // a synced page (Confluence, a web page): open it where it lives
        anchor.replaceWith(el("a", { href: s.source, target: "_blank", rel: "noopener noreferrer", class: "source-title" }, label));
      } else if (s.doc_id) { // each source names its document: open it at the cited section, the download beside it
        const id = encodeURIComponent(s.doc_id);
        const view = `/view/${id}` + (s.section ? `#section=${encodeURIComponent(s.section)}` : "")
          + (s.section && s.chunk_id ? `&chunk=${encodeURIComponent(s.chunk_id)}` : "");
        const a = el("a", { href: view, target: "_blank", rel: "noopener", class: "source-title" }, label);
        anchor.replaceWith(a);
        item.append(el("a", { href: `/documents/${id}/content`, class: "source-download",
                              title: "Download the original file" }, "download"));
      }
    }
    return el("div", { class: "sources-box" }, el("div", { class: "sources-heading" }, "Sources"), list);
  }

  // answers end with a plain-text "Sources:" list for API clients; the page shows its own, with links
  function withoutSourcesFooter(answer) {
    return answer.replace(/\n+\s*Sources:\s*\n(?:\s*\[\d+\][^\n]*(?:\n|$))+\s*$/, "");
  }

  function renderAnswer(text, key, sourceCount) {
    const safeKey = /^[0-9a-f]+$/.test(key || "") ? key : "x";
    const html = renderMarkdown(text, {
      cite: (n) => (n >= 1 && n <= sourceCount ? `<a class="cite" href="#src-${safeKey}-${n}">[${n}]</a>` : null),
    });
    const box = el("div", { class: "answer markdown" });
    box.innerHTML = html; // renderMarkdown escapes everything first: this is our markup only
    return box;
  }

  // --- messages -----------------------------------------------------------------------------------------
  function userMessage(text) {
    return el("article", { class: "msg user" }, el("div", { class: "bubble" }, text));
  }

  function scrollDown() {
    messages.scrollTop = messages.scrollHeight;
  }

  function retireButtons() {
    messages.querySelectorAll(".quick-replies button, .ticket-actions button").forEach((b) => { b.disabled = true; });
  }

  function quickReplies(...buttons) {
    return el("div", { class: "quick-replies" }, buttons.map(([label, message, style]) =>
      el("button", { type: "button", class: `button ${style || ""}`, dataset: { reply: message },
                     onclick: () => send(message) }, label)));
  }

  function troubleshootingPanel(flow) {
    const panel = el("div", { class: `troubleshooting ${flow.status}` });
    if (flow.status === "in_progress" || flow.status === "paused") {
      panel.append(el("div", { class: "step-count" }, `Step ${flow.step} of ${flow.total}`,
        flow.status === "paused" ? " (paused)" : ""),
      el("progress", { max: flow.total, value: flow.step, "aria-label": `Step ${flow.step} of ${flow.total}` }));
      panel.append(flow.status === "paused"
        ? quickReplies(["Continue troubleshooting", "continue", "primary"])
        : quickReplies(["✓ It works now", "It works now", "good"], ["✕ Still not working", "Still not working", "bad"],
          ["Done, next step", "next", ""], ["Show all steps", "show all steps", "subtle"],
          ["Stop troubleshooting", "stop", "subtle"]));
    } else if (flow.status === "completed") {
      panel.append(el("div", { class: "step-count" }, `All ${flow.total} steps shown`),
        quickReplies(["✓ It works now", "It works now", "good"], ["✕ Still not working", "Still not working", "bad"]));
    } else if (flow.status === "resolved") {
      panel.append(el("div", { class: "step-count" }, `✓ Solved at step ${Math.min(flow.step, flow.total)} of ${flow.total}`));
    } else if (flow.status === "escalated") {
      const failed = (flow.steps || []).filter((s) => s.outcome === "failed").length;
      panel.append(el("div", { class: "step-count" }, `${failed} of ${flow.total} steps tried without success`));
    }
    return panel;
  }

  function ticketPanel(envelope) {
    const event = envelope.ticket_event;
    if ((event === "offered" || event === "edited") && envelope.ticket_offer) {
      const offer = envelope.ticket_offer;
      return el("div", { class: "ticket-card offer" },
        el("div", { class: "ticket-heading" }, icon("ticket"), "Ticket draft"),
        el("dl", {}, el("dt", {}, "Summary"), el("dd", {}, offer.summary),
          el("dt", {}, "Priority"), el("dd", {}, offer.priority),
          el("dt", {}, "Steps tried"), el("dd", {}, String(offer.steps_tried))),
        el("div", { class: "ticket-actions quick-replies" },
          el("button", { type: "button", class: "button primary", dataset: { reply: "yes" }, onclick: () => send("yes") },
            "Create the ticket"),
          el("button", { type: "button", class: "button subtle", dataset: { reply: "no thanks" },
                         onclick: () => send("no thanks") }, "No thanks")));
    }
    if (envelope.ticket && (event === "created" || event === "existing" || event === "closed")) {
      const t = envelope.ticket;
      const link = t.url && /^https?:\/\//.test(t.url)
        ? el("a", { href: t.url, target: "_blank", rel: "noopener noreferrer" }, t.jira_key || "open in Jira") : null;
      return el("div", { class: `ticket-card ${event}` },
        el("div", { class: "ticket-heading" }, icon("ticket"), event === "closed" ? "Ticket closed" : "Ticket raised"),
        el("div", { class: "ticket-id", dataset: { ticketId: t.id } }, t.id),
        el("div", { class: "muted" }, `Status: ${t.status}`, link ? " · " : "", link));
    }
    return null;
  }

  function renderIncidents(list) {
    incidents.replaceChildren(...(list || []).map((i) => el("div", { class: `incident impact-${i.impact}`, role: "status" },
      icon("alert"), el("strong", {}, i.name), ` — ${i.status}`, i.components.length ? ` (${i.components.join(", ")})` : "",
      i.latest_update ? el("div", { class: "incident-update" }, i.latest_update) : null,
      i.shortlink && /^https?:\/\//.test(i.shortlink)
        ? el("a", { href: i.shortlink, target: "_blank", rel: "noopener noreferrer" }, "Status page") : null)));
  }

  function feedbackBar(envelope) {
    const messageId = envelope.message_id || envelope.trace_id;
    const status = el("span", { class: "feedback-status muted" });
    const reasonForm = el("form", { class: "feedback-reason", hidden: true });
    const reason = el("input", { type: "text", maxlength: 1000, placeholder: "What was good or missing? (optional)",
                                 "aria-label": "Why (optional)" });
    reasonForm.append(reason, el("button", { type: "submit", class: "button small" }, "Send"));
    let rating = null;

    async function vote(value, text) {
      rating = value;
      up.setAttribute("aria-pressed", String(value === "up"));
      down.setAttribute("aria-pressed", String(value === "down"));
      const response = await fetch("/feedback", {
        method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ session_id: envelope.session_id, message_id: messageId, rating: value,
                               reason: text || null }),
      });
      status.textContent = response.ok ? (text ? "Thanks for the detail." : "Thanks!") : await errorDetail(response);
      bar.dataset.voted = response.ok ? value : "";
      if (response.ok && !text) { reasonForm.hidden = false; reason.focus(); }
      if (text) reasonForm.hidden = true;
    }
    const up = el("button", { type: "button", class: "thumb", title: "Helpful", "aria-label": "Helpful",
                              "aria-pressed": "false", onclick: () => vote("up") }, icon("up"));
    const down = el("button", { type: "button", class: "thumb", title: "Not helpful", "aria-label": "Not helpful",
                                "aria-pressed": "false", onclick: () => vote("down") }, icon("down"));
    reasonForm.addEventListener("submit", (e) => {
      e.preventDefault();
      if (reason.value.trim() && rating) vote(rating, reason.value.trim());
    });
    const bar = el("div", { class: "feedback" }, up, down, status, reasonForm);
    return bar;
  }

  function stepsSummary(steps, envelope) {
    const timings = envelope && envelope.timings;
    const details = el("details", { class: "steps stages" },
      // "stages": how the answer was made (graph nodes); "Step n of m" is reserved for troubleshooting
      el("summary", { title: "How this answer was made" }, `${steps.length} stages`,
        timings ? ` · ${formatMs(timings.total_ms)}` : ""),
      el("ol", { class: "progress done" }, steps.map((s) => el("li", { dataset: { node: s.name } },
        STEP_LABELS[s.name] || s.name, el("span", { class: "muted" }, ` ${formatMs(s.duration_ms)}`)))));
    if (timings) {
      details.append(el("div", { class: "stage-timings muted" },
        `search ${formatMs(timings.embedding_ms + timings.retrieval_ms)} · decision ${formatMs(timings.decision_ms)} · ` +
        `reply ${formatMs(timings.generation_ms)}`));
    }
    return details;
  }

  function assistantMessage(envelope, steps, interactive) {
    const key = envelope.trace_id || "";
    const sources = envelope.sources || [];
    const text = sources.length ? withoutSourcesFooter(envelope.answer) : envelope.answer;
    const bubble = el("div", { class: "bubble" }, renderAnswer(text, key, sources.length));
    const flow = envelope.troubleshooting;
    // an escalated workflow is told once, beside the ticket offer; later turns show the ticket instead
    if (flow && (flow.status !== "escalated" || ["offered", "edited"].includes(envelope.ticket_event))) {
      bubble.append(troubleshootingPanel(flow));
    }
    const ticket = ticketPanel(envelope);
    if (ticket) bubble.append(ticket);
    if (sources.length) bubble.append(sourceList(sources, key));
    const meta = el("div", { class: "meta" }, stepsSummary(steps, envelope));
    if (!envelope.is_clarifying && envelope.action !== "create_ticket") meta.append(feedbackBar(envelope));
    if (key) meta.append(el("a", { class: "trace-link muted", href: `/admin#trace=${key}`, target: "_blank",
                                   rel: "noopener", title: "How this answer came about (admins)" }, "trace"));
    const article = el("article", { class: `msg assistant action-${envelope.action}`, dataset: { trace: key } },
      bubble, meta);
    if (!interactive) article.querySelectorAll(".quick-replies button").forEach((b) => { b.disabled = true; });
    return article;
  }

  function liveMessage() {
    const progress = el("ol", { class: "progress live" });
    const text = el("div", { class: "answer markdown streaming" });
    const typing = el("div", { class: "typing", "aria-label": "deskmate is working" },
      el("span", {}), el("span", {}), el("span", {}));
    const article = el("article", { class: "msg assistant live" }, el("div", { class: "bubble" }, progress, text, typing));
    let streamed = "";
    return {
      article,
      steps: [],
      node(event) {
        this.steps.push(event);
        progress.querySelectorAll("li").forEach((li) => li.classList.add("done"));
        progress.append(el("li", { dataset: { node: event.name } }, STEP_LABELS[event.name] || event.name));
        scrollDown();
      },
      token(chunk) {
        streamed += chunk;
        text.innerHTML = renderMarkdown(streamed); // escaped first, see markdown.js
        scrollDown();
      },
      content(chunk) {
        streamed = chunk;
        text.innerHTML = renderMarkdown(withoutSourcesFooter(chunk));
        scrollDown();
      },
      error(detail) {
        typing.remove();
        article.classList.remove("live");
        article.classList.add("error");
        text.replaceChildren(el("p", {}, `Sorry — ${detail}`));
      },
    };
  }

  // --- sending ------------------------------------------------------------------------------------------
  async function send(text) {
    text = (text || "").trim();
    if (!text || busy) return;
    busy = true;
    sendButton.disabled = true;
    retireButtons();
    welcome.hidden = true;
    const first = !sessionId;
    messages.append(userMessage(text));
    const live = liveMessage();
    messages.append(live.article);
    scrollDown();
    let pendingUser = text;
    const body = { message: text, channel: "web" };
    if (sessionId) body.session_id = sessionId;
    const os = osForRequest(first);
    if (os) body.user_os = os;
    try {
      const response = await fetch("/chat/stream", {
        method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        live.error(await errorDetail(response));
        return;
      }
      for await (const { event, data } of sseEvents(response)) {
        if (event === "start") {
          sessionId = data.session_id;
          store.touch(sessionId, text.slice(0, 60));
          store.append(sessionId, { role: "user", text: pendingUser });
          pendingUser = null;
          renderSessions();
        } else if (event === "node") live.node(data);
        else if (event === "token") live.token(data.text);
        else if (event === "content_chunk") live.content(data.text);
        else if (event === "message_complete") {
          const message = assistantMessage(data, live.steps, true);
          live.article.replaceWith(message);
          store.append(sessionId, { role: "assistant", envelope: data, steps: live.steps });
          store.touch(sessionId, text.slice(0, 60));
          renderIncidents(data.incidents);
          showAssumedOs(data.user_os);
          renderSessions();
        } else if (event === "error") live.error(data.detail);
      }
    } catch (error) {
      live.error("the connection was lost; please try again.");
    } finally {
      busy = false;
      sendButton.disabled = false;
      scrollDown();
      input.focus();
    }
  }

  composer.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value;
    input.value = "";
    input.style.height = "";
    updateCounter();
    send(text);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      composer.requestSubmit();
    }
  });
  input.addEventListener("input", () => {
    input.style.height = "";
    input.style.height = `${Math.min(input.scrollHeight, 180)}px`;
  });

  // --- what the server allows: one message limit (with a counter), suggestions from what is configured ----
  const counter = document.getElementById("char-count");
  let messageLimit = null;
  function updateCounter() {
    if (!messageLimit) { counter.textContent = ""; return; }
    const used = input.value.length;
    counter.textContent = `${used.toLocaleString()} / ${messageLimit.toLocaleString()}`;
    counter.classList.toggle("near-limit", used > messageLimit * 0.9);
  }
  input.addEventListener("input", updateCounter);
  async function loadUiSettings() {
    let config = null;
    try {
      const response = await fetch("/ui-settings");
      if (response.ok) config = await response.json();
    } catch (_) { /* the page still works; the server checks the limit anyway */ }
    if (config && config.max_message_chars) {
      messageLimit = config.max_message_chars;
      input.maxLength = messageLimit;
      updateCounter();
    }
    const box = document.getElementById("suggestions");
    box.replaceChildren(...((config && config.suggestions) || []).map((text) =>
      el("button", { class: "chip", type: "button", onclick: () => send(text) }, text)));
  }
  loadUiSettings();

  const latest = store.sessions()[0];
  openSession(latest ? latest.id : null);
})();
