// The admin page: traces (with the graph drawn and the run's path highlighted), documents, tickets, graphs.
// Every call carries the admin key when one was entered (kept for this browser tab only).
(function () {
  "use strict";
  const { el, formatMs, formatTime, errorDetail } = window.Deskmate;

  const access = document.getElementById("access");
  const accessMessage = document.getElementById("access-message");
  const keyState = document.getElementById("key-state");
  const panels = { traces: "tab-traces", documents: "tab-documents", sources: "tab-sources", jobs: "tab-jobs", tickets: "tab-tickets", graphs: "tab-graphs", insights: "tab-insights" };
  const loaded = {};

  // --- calls ----------------------------------------------------------------------------------------
  function authHeaders() {
    const key = sessionStorage.getItem("deskmate.adminKey");
    return key ? { authorization: `Bearer ${key}` } : {};
  }

  async function api(path, options) {
    options = options || {};
    const response = await fetch(path, { ...options, headers: { ...authHeaders(), ...(options.headers || {}) } });
    if (response.status === 401 || response.status === 403) {
      showAccess(await errorDetail(response), response.status === 401);
      throw new Error("not allowed");
    }
    if (!response.ok) throw new Error(await errorDetail(response));
    return response.status === 204 ? null : response.json();
  }

  function showAccess(message, askForKey) {
    access.hidden = false;
    accessMessage.textContent = message;
    document.getElementById("key-form").hidden = !askForKey;
  }

  document.getElementById("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("deskmate.adminKey", document.getElementById("key-input").value);
    access.hidden = true;
    updateKeyState();
    Object.keys(loaded).forEach((k) => delete loaded[k]);
    openTab(currentTab());
  });

  function updateKeyState() {
    keyState.textContent = sessionStorage.getItem("deskmate.adminKey") ? "admin key set" : "";
  }

  // --- tabs -----------------------------------------------------------------------------------------
  const tabs = document.querySelectorAll(".tab");
  function currentTab() {
    return [...tabs].find((t) => t.getAttribute("aria-selected") === "true").dataset.tab;
  }
  function openTab(name) {
    tabs.forEach((t) => t.setAttribute("aria-selected", String(t.dataset.tab === name)));
    Object.entries(panels).forEach(([tab, id]) => { document.getElementById(id).hidden = tab !== name; });
    if (!loaded[name]) {
      loaded[name] = true;
      ({ traces: loadTraces, documents: loadDocuments, sources: loadSources, jobs: loadJobs, tickets: loadTickets, graphs: loadGraphs, insights: loadInsights })[name]()
        .catch((error) => { loaded[name] = false; if (error.message !== "not allowed") console.error(error); });
    }
  }
  tabs.forEach((t) => t.addEventListener("click", () => openTab(t.dataset.tab)));

  function badge(text, kind) {
    return el("span", { class: `badge ${kind || text || ""}` }, text || "–");
  }

  function json(value) {
    return el("pre", {}, JSON.stringify(value, null, 2));
  }

  // --- traces -----------------------------------------------------------------------------------------
  const traceFilters = document.getElementById("trace-filters");
  const traceBody = document.querySelector("#trace-table tbody");
  const traceDetail = document.getElementById("trace-detail");

  async function loadTraces() {
    const form = new FormData(traceFilters);
    const params = new URLSearchParams({ limit: "100" });
    for (const name of ["graph", "action", "session_id"]) if (form.get(name)) params.set(name, form.get(name));
    if (form.get("since")) params.set("since", new Date(form.get("since")).toISOString());
    const body = await api(`/traces?${params}`);
    traceBody.replaceChildren(...body.traces.map((t) => el("tr", {
      class: "clickable", dataset: { trace: t.trace_id }, onclick: () => openTrace(t.trace_id),
    },
    el("td", { class: "mono" }, formatTime(t.started_at)),
    el("td", {}, t.graph),
    el("td", {}, el("div", {}, t.summary || "–"), el("div", { class: "path" }, t.path.join(" → "))),
    el("td", {}, t.action ? badge(t.action, "action") : "–"),
    el("td", {}, badge(t.status)),
    el("td", { class: "num" }, formatMs(t.duration_ms)),
    el("td", {}, t.feedback ? badge(t.feedback === "up" ? "helpful" : "not helpful", t.feedback) : ""))));
    if (!body.traces.length) traceBody.append(el("tr", {}, el("td", { colspan: 7, class: "empty" }, "No runs yet.")));
  }
  traceFilters.addEventListener("submit", (e) => { e.preventDefault(); loadTraces(); });
  document.getElementById("trace-refresh").addEventListener("click", () => loadTraces());

  function bar(value, max) {
    const inner = el("div", { class: "bar" });
    inner.style.width = `${max > 0 ? Math.max(1, (100 * value) / max) : 0}%`; // CSSOM, allowed by the CSP
    return el("div", { class: "bar-track" }, inner);
  }

  function stageBars(timings) {
    const rows = [["embedding", timings.embedding_ms], ["retrieval", timings.retrieval_ms],
      ["decision", timings.decision_ms], ["generation", timings.generation_ms], ["total", timings.total_ms]];
    return el("div", { class: "stage-bars" }, rows.flatMap(([name, ms]) =>
      [el("span", {}, name), bar(ms, timings.total_ms), el("span", { class: "num" }, formatMs(ms))]));
  }

  async function openTrace(traceId) {
    traceBody.querySelectorAll("tr").forEach((r) => r.classList.toggle("selected", r.dataset.trace === traceId));
    history.replaceState(null, "", `#trace=${traceId}`);
    const t = await api(`/traces/${encodeURIComponent(traceId)}`);
    const longest = Math.max(...t.nodes.map((n) => n.duration_ms || 0), 0.001);
    const diagram = el("div", { class: "trace-diagram" });
    if (t.diagram) {
      // server-drawn SVG (app/ui/diagram.py): node names and numbers only, every label escaped
      diagram.innerHTML = t.diagram.svg;
    }
    const summary = el("dl", { class: "facts" },
      el("dt", {}, "Trace"), el("dd", { class: "mono" }, t.trace_id),
      el("dt", {}, "Graph"), el("dd", {}, t.graph),
      el("dt", {}, "Session"), el("dd", { class: "mono" }, t.session_id || "–"),
      el("dt", {}, "Started"), el("dd", {}, formatTime(t.started_at)),
      el("dt", {}, "Status"), el("dd", {}, badge(t.status), t.action ? " " : "", t.action ? badge(t.action, "action") : "",
        t.intent ? ` ${t.intent}` : ""),
      el("dt", {}, "Duration"), el("dd", {}, formatMs(t.duration_ms)),
      el("dt", {}, "Path"), el("dd", { class: "path-text" }, t.path.join(" → ")),
      el("dt", {}, "Tags"), el("dd", {}, (t.tags || []).join(", ") || "–"),
      el("dt", {}, "Vote"), el("dd", {}, t.feedback ? [badge(t.feedback.rating), t.feedback.reason ? ` “${t.feedback.reason}”` : ""] : "–"));
    const nodes = el("table", { class: "data node-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "Node"), el("th", { class: "num" }, "Start"),
        el("th", { class: "num" }, "Duration"), el("th", { class: "bar-cell" }, ""), el("th", {}, "Wrote"))),
      el("tbody", {}, t.nodes.map((n) => el("tr", { dataset: { node: n.name } },
        el("td", { class: "num" }, String(n.seq + 1)),
        el("td", {}, el("strong", {}, n.name), n.error ? el("div", { class: "badge error" }, n.error) : ""),
        el("td", { class: "num mono" }, formatMs(n.start_ms)),
        el("td", { class: "num mono node-duration" }, formatMs(n.duration_ms)),
        el("td", { class: "bar-cell" }, bar(n.duration_ms || 0, longest)),
        el("td", { class: "mono" }, n.output_keys.join(", "))))));
    const decisions = t.decisions.length ? el("table", { class: "data" },
      el("thead", {}, el("tr", {}, el("th", {}, "Action"), el("th", {}, "By"), el("th", {}, "Why"))),
      el("tbody", {}, t.decisions.map((d) => el("tr", {}, el("td", {}, badge(d.action, "action")),
        el("td", {}, d.decided_by || ""), el("td", {}, d.reasoning || ""))))) : el("div", { class: "empty" }, "No decision in this run.");
    const pct = (x) => (typeof x === "number" ? `${Math.round(x * 100)} %` : "–");
    const articles = (search) => (search.articles && search.articles.length ? el("table", { class: "data articles" },
      el("thead", {}, el("tr", {}, ["Article", "Score", "Answerable", "Confidence"].map((h) => el("th", {}, h)))),
      el("tbody", {}, search.articles.map((a) => el("tr", {},
        el("td", {}, a.title, el("div", { class: "path" }, a.source)),
        el("td", { class: "num" }, (a.score ?? 0).toFixed(3)),
        el("td", { class: "num" }, pct(a.answerable)),
        el("td", { class: "num" }, pct(a.confidence)))))) : []);
    const retrieval = t.retrieval.length ? t.retrieval.map((search) => el("div", {},
      el("div", { class: "muted" }, `Search ${search.search}: “${search.query || ""}”` +
        (search.question_type ? ` · asks: ${search.question_type}` : "") +
        (typeof search.confidence === "number" ? ` · confidence ${pct(search.confidence)}` : "")),
      articles(search),
      el("table", { class: "data candidates" },
        el("thead", {}, el("tr", {}, ["#", "Passage", "Role", "Score", "Dense", "BM25", "Origin"].map((h) => el("th", {}, h)))),
        el("tbody", {}, search.candidates.map((c, i) => el("tr", { dataset: { chunk: c.chunk_id } },
          el("td", { class: "num" }, String(i + 1)),
          el("td", {}, `${c.title}${c.section ? " › " + c.section : ""}`, el("div", { class: "path" }, c.source)),
          el("td", {}, c.role || ""),
          el("td", { class: "num" }, (c.score ?? 0).toFixed(3)),
          el("td", { class: "num" }, c.dense_score !== undefined ? c.dense_score.toFixed(3) : "–"),
          el("td", { class: "num" }, c.lexical_score !== undefined ? c.lexical_score.toFixed(3) : "–"),
          el("td", {}, c.origin || ""))))))) : [el("div", { class: "empty" }, "No search in this run.")];
    const llm = t.llm_calls.length ? el("table", { class: "data" },
      el("thead", {}, el("tr", {}, ["Node", "Model", "Duration", "Prompt", "Completion", "Error"].map((h) => el("th", {}, h)))),
      el("tbody", {}, t.llm_calls.map((c) => el("tr", {}, el("td", {}, c.node), el("td", {}, c.model),
        el("td", { class: "num" }, formatMs(c.duration_ms)), el("td", { class: "num" }, c.prompt_tokens ?? "–"),
        el("td", { class: "num" }, c.completion_tokens ?? "–"), el("td", {}, c.error || ""))))) :
      el("div", { class: "empty" }, "No LLM call (offline answer).");
    const problems = [...t.errors.map((e) => el("div", { class: "notice" }, `${e.node || "run"}: ${e.error}`)),
      ...t.fallbacks.map((f) => el("div", { class: "notice" }, `${f.node}: ${f.notice}`))];
    traceDetail.hidden = false;
    traceDetail.replaceChildren(el("div", { class: "trace-layout" },
      el("div", { class: "card" }, el("h2", {}, "Path through the graph"), diagram),
      el("div", {},
        el("div", { class: "card" }, el("h2", {}, "Run"), summary,
          t.timings && t.graph === "support" ? [el("h3", {}, "Stages"), stageBars(t.timings)] : ""),
        el("div", { class: "card" }, el("h2", {}, "Nodes"), nodes),
        el("div", { class: "card" }, el("h2", {}, "Decisions"), decisions),
        el("div", { class: "card" }, el("h2", {}, "Retrieval candidates"), retrieval),
        el("div", { class: "card" }, el("h2", {}, "LLM calls"), llm),
        problems.length ? el("div", { class: "card" }, el("h2", {}, "Errors and fallbacks"), problems) : "",
        el("div", { class: "card" }, el("h2", {}, "Input and output (redacted)"),
          el("details", { class: "raw" }, el("summary", {}, "Input"), json(t.input)),
          el("details", { class: "raw" }, el("summary", {}, "Output"), json(t.output)),
          t.diagram ? el("details", { class: "raw" }, el("summary", {}, "Mermaid"), el("pre", {}, t.diagram.mermaid)) : ""))));
    traceDetail.scrollIntoView({ behavior: "smooth", block: "start" });
  }

  // --- documents ----------------------------------------------------------------------------------------
  const documentBody = document.querySelector("#document-table tbody");
  async function loadDocuments() {
    const body = await api("/documents");
    documentBody.replaceChildren(...body.documents.map((d) => el("tr", { dataset: { document: d.id } },
      el("td", {}, el("a", { href: `/documents/${encodeURIComponent(d.id)}/content`, target: "_blank", rel: "noopener" }, d.title)),
      el("td", { class: "mono" }, d.source),
      el("td", {}, d.content_type),
      el("td", {}, d.audience && d.audience.length ? d.audience.join(", ") : "everyone"),
      el("td", { class: "num" }, String(d.chunks)),
      el("td", { class: "num" }, `${(d.size_bytes / 1024).toFixed(1)} KB`),
      el("td", { class: "when" }, formatTime(d.indexed_at)),
      el("td", {}, el("button", { type: "button", class: "button small danger", onclick: () => removeDocument(d) }, "Delete")))));
    if (!body.documents.length) documentBody.append(el("tr", {}, el("td", { colspan: 8, class: "empty" }, "No documents.")));
  }

  async function removeDocument(d) {
    if (!window.confirm(`Delete “${d.title}” (${d.source}) from the knowledge base?`)) return;
    await api(`/documents/${encodeURIComponent(d.id)}`, { method: "DELETE" });
    loadDocuments();
  }

  // --- synced sources -------------------------------------------------------------------------------------
  const sourceBody = document.querySelector("#source-table tbody");
  let sourcePoll = null;
  function changes(c) {
    if (!c || !Object.keys(c).length) return "";
    return `+${c.added || 0} ~${c.updated || 0} −${c.deleted || 0}` + (c.permissions_changed ? `, ${c.permissions_changed} permission` : "") +
      (c.failed ? `, ${c.failed} failed` : "") + (c.withheld ? `, ${c.withheld} withheld (no audience may read them)` : "") +
      ` (${c.chunks_embedded || 0} chunks embedded)`;
  }
  async function loadSources() {
    const body = await api("/sources");
    sourceBody.replaceChildren(...body.sources.map((s) => el("tr", { dataset: { source: s.id } },
      el("td", {}, s.name, el("div", { class: "path" }, s.base_url)),
      el("td", {}, s.type),
      el("td", {}, badge(s.status)),
      el("td", { class: "num" }, String(s.documents)),
      el("td", {}, s.last_sync_at ? formatTime(s.last_sync_at) : "never"),
      el("td", {}, changes(s.last_counts)),
      el("td", {}, s.last_error || ""),
      el("td", {},
        el("button", { type: "button", class: "button small", onclick: () => syncSource(s) }, "Sync now"),
        el("button", { type: "button", class: "button small danger", onclick: () => removeSource(s) }, "Delete")))));
    if (!body.sources.length) sourceBody.append(el("tr", {}, el("td", { colspan: 8, class: "empty" }, "No synced sources.")));
    const busy = body.sources.some((s) => s.status === "queued" || s.status === "syncing");
    clearTimeout(sourcePoll);
    if (busy) sourcePoll = setTimeout(() => loadSources().catch(() => {}), 2000); // progress while a sync runs
  }
  const sourceForm = document.getElementById("source-form");
  const sourceStatus = document.getElementById("source-status");
  sourceForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(sourceForm);
    const body = { type: data.get("type"), name: data.get("name"), base_url: data.get("base_url"), schedule: data.get("schedule") };
    for (const field of ["scope", "credential_env", "group_map"]) {
      try {
        body[field] = JSON.parse(data.get(field) || "{}");
      } catch (error) {
        sourceStatus.textContent = `${field} is not valid JSON: ${error.message}`;
        return;
      }
    }
    try {
      const added = await api("/sources", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      sourceStatus.textContent = `Added ${added.name}; press Sync now to fetch its documents.`;
    } catch (error) {
      sourceStatus.textContent = error.message;
    }
    loadSources();
  });
  async function syncSource(s) {
    await api(`/sources/${encodeURIComponent(s.id)}/sync`, { method: "POST" }).catch((error) => window.alert(error.message));
    loadSources();
  }
  async function removeSource(s) {
    if (!window.confirm(`Delete the source “${s.name}” and its ${s.documents} documents from the knowledge base?`)) return;
    await api(`/sources/${encodeURIComponent(s.id)}`, { method: "DELETE" }).catch((error) => window.alert(error.message));
    loadSources();
  }

  const uploadForm = document.getElementById("upload-form");
  const uploadProgress = document.getElementById("upload-progress");
  const uploadStatus = document.getElementById("upload-status");
  uploadForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(uploadForm);
    const request = new XMLHttpRequest(); // fetch() cannot report upload progress
    request.open("POST", "/documents");
    Object.entries(authHeaders()).forEach(([k, v]) => request.setRequestHeader(k, v));
    uploadProgress.hidden = false;
    uploadProgress.value = 0;
    uploadStatus.textContent = "Uploading…";
    request.upload.addEventListener("progress", (p) => {
      if (p.lengthComputable) uploadProgress.value = (100 * p.loaded) / p.total;
      if (p.loaded === p.total) uploadStatus.textContent = "Indexing…";
    });
    request.addEventListener("load", () => {
      let body = {};
      try { body = JSON.parse(request.responseText); } catch (_) { /* not JSON */ }
      if (request.status === 202 && body.job) {
        followUpload(body.job.id); // queued: its job indexes it; show how far it got
      } else if (request.status >= 200 && request.status < 300) {
        uploaded(body.status, body.document);
      } else {
        uploadStatus.textContent = `Refused: ${body.detail || request.statusText}`;
      }
    });
    request.addEventListener("error", () => { uploadStatus.textContent = "The upload failed: the connection was lost."; });
    request.send(data);
  });

  function uploaded(status, doc) {
    uploadProgress.value = 100;
    uploadStatus.textContent = `${status}: ${doc.title} (${doc.chunks} chunks)`;
    uploadForm.reset();
    loadDocuments();
  }
  async function followUpload(jobId) {
    const job = await api(`/jobs/${encodeURIComponent(jobId)}`).catch(() => null);
    if (!job) { uploadStatus.textContent = "Queued; see the Jobs tab for its progress."; return; }
    if (job.state === "done") { uploaded(job.result.status, job.result.document); return; }
    if (job.state === "failed" || job.state === "cancelled") {
      uploadStatus.textContent = `${job.state === "failed" ? "Refused" : "Cancelled"}: ${job.error || ""}`;
      return;
    }
    const { done, total } = job.progress;
    uploadProgress.value = total ? (100 * done) / total : 0;
    uploadStatus.textContent = job.state === "queued" ? "Queued for indexing…" : `Indexing… ${done} of ${total || "?"} chunks`;
    setTimeout(() => followUpload(jobId), 500);
  }

  // --- jobs ---------------------------------------------------------------------------------------------
  const jobBody = document.querySelector("#job-table tbody");
  let jobPoll = null;
  function jobOutcome(j) {
    if (j.error) return j.error;
    if (!j.result) return "";
    if (j.result.document) return `${j.result.status}: ${j.result.document.title} (${j.result.document.chunks} chunks)`;
    if (j.result.counts) return Object.entries(j.result.counts).map(([status, n]) => `${n} ${status}`).join(", ") || "nothing to do";
    return changes(j.result); // a source sync's counts
  }
  async function loadJobs() {
    const body = await api("/jobs?limit=50");
    jobBody.replaceChildren(...body.jobs.map((j) => el("tr", { dataset: { job: j.id, state: j.state } },
      el("td", { class: "when" }, formatTime(j.created_at)),
      el("td", {}, j.kind.replace("_", " ")),
      el("td", { class: "mono" }, j.subject),
      el("td", {}, badge(j.cancel_requested && j.state === "running" ? "cancelling" : j.state)),
      el("td", {}, el("progress", { class: "job-progress", max: String(j.progress.total || 1), value: String(j.progress.done) }),
        ` ${j.progress.done} / ${j.progress.total} chunks`),
      el("td", { class: "num" }, String(j.attempts)),
      el("td", {}, jobOutcome(j)),
      el("td", {}, j.state === "queued" || j.state === "running"
        ? el("button", { type: "button", class: "button small danger", onclick: () => cancelJob(j) }, "Cancel") : ""))));
    if (!body.jobs.length) jobBody.append(el("tr", {}, el("td", { colspan: 8, class: "empty" }, "No jobs yet.")));
    clearTimeout(jobPoll);
    const busy = body.jobs.some((j) => j.state === "queued" || j.state === "running");
    if (busy && currentTab() === "jobs") jobPoll = setTimeout(() => loadJobs().catch(() => {}), 1000);
  }
  async function cancelJob(j) {
    if (!window.confirm(`Cancel the ${j.kind.replace("_", " ")} job for “${j.subject}”? The knowledge base keeps what it had.`)) return;
    await api(`/jobs/${encodeURIComponent(j.id)}`, { method: "DELETE" }).catch((error) => window.alert(error.message));
    loadJobs();
  }

  // --- tickets ------------------------------------------------------------------------------------------
  const ticketBody = document.querySelector("#ticket-table tbody");
  const ticketDetail = document.getElementById("ticket-detail");
  async function loadTickets() {
    const body = await api("/admin/tickets");
    ticketBody.replaceChildren(...body.tickets.map((t) => el("tr", { class: "clickable", dataset: { ticket: t.id },
                                                              onclick: () => openTicket(t.id) },
      el("td", { class: "mono" }, t.id), el("td", {}, badge(t.status)), el("td", {}, t.priority),
      el("td", {}, t.summary), el("td", {}, t.os || "–"), el("td", { class: "when" }, formatTime(t.created_at)),
      el("td", {}, t.jira_key || (t.jira_error ? badge("not sent", "error") : "–")))));
    if (!body.tickets.length) ticketBody.append(el("tr", {}, el("td", { colspan: 7, class: "empty" }, "No tickets.")));
  }

  async function openTicket(id) {
    const t = await api(`/tickets/${encodeURIComponent(id)}`);
    ticketDetail.hidden = false;
    ticketDetail.replaceChildren(el("div", { class: "card" }, el("h2", {}, `${t.id} — ${t.summary}`),
      el("p", {}, t.description),
      el("h3", {}, "Steps tried"),
      t.steps_tried.length ? el("ol", {}, t.steps_tried.map((s) => el("li", {}, `${s.step} — ${s.outcome}`))) :
        el("div", { class: "empty" }, "none"),
      el("h3", {}, "Conversation (redacted)"),
      el("dl", { class: "facts" }, t.conversation.flatMap((m) => [el("dt", {}, m.role), el("dd", {}, m.content)]))));
  }

  // --- graphs -------------------------------------------------------------------------------------------
  async function loadGraphs() {
    const list = await api("/graphs");
    const cards = await Promise.all(list.graphs.map(async (g) => {
      const detail = await api(`/graphs/${encodeURIComponent(g.name)}`);
      const drawing = el("div", { class: "trace-diagram" });
      drawing.innerHTML = detail.svg; // drawn by the server from the compiled graph; labels escaped
      return el("div", { class: "card" }, el("h2", {}, g.name), el("p", { class: "muted" }, g.description), drawing,
        el("details", { class: "raw" }, el("summary", {}, "Mermaid (from the compiled graph)"), el("pre", {}, detail.mermaid)));
    }));
    document.getElementById("graph-list").replaceChildren(...cards);
  }

  // --- insights -----------------------------------------------------------------------------------------
  const insightFilters = document.getElementById("insight-filters");
  const insightStatus = document.getElementById("insight-status");
  function insightQuery() {
    const params = new URLSearchParams();
    new FormData(insightFilters).forEach((value, name) => { if (value) params.set(name, value); });
    return params.toString() ? `?${params}` : "";
  }
  async function loadInsights() {
    insightStatus.textContent = "Counting…";
    try {
      const figures = await api(`/admin/insights${insightQuery()}`);
      window.DeskmateInsights.render(document.getElementById("insight-body"), figures);
      insightStatus.textContent = "";
    } catch (error) {
      insightStatus.textContent = error.message === "not allowed" ? "" : error.message;
      throw error;
    }
  }
  insightFilters.addEventListener("submit", (e) => { e.preventDefault(); loadInsights().catch(() => {}); });
  document.getElementById("insight-csv").addEventListener("click", async () => {
    const response = await fetch(`/admin/insights.csv${insightQuery()}`, { headers: authHeaders() });
    if (!response.ok) { insightStatus.textContent = await errorDetail(response); return; }
    window.DeskmateInsights.saveFile("deskmate-insights.csv", await response.text(), "text/csv");
  });

  updateKeyState();
  const startTab = /^#tab=(\w+)$/.exec(location.hash);
  openTab(startTab && panels[startTab[1]] ? startTab[1] : "traces");
  const deepLink = /^#trace=([0-9a-f]{32})$/.exec(location.hash);
  if (deepLink) openTrace(deepLink[1]).catch(() => {});
})();
