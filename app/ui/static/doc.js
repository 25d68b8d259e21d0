// The document view (/view/<doc_id>#section=<heading path>&chunk=<chunk id>): the document as deskmate indexed it, section by
// section, rendered from text with markdown.js (escaped first: no markup from a document reaches the page),
// scrolled to the cited section and highlighted; the original is one click away ("Download the original").
(function () {
  "use strict";
  const { el, errorDetail } = window.Deskmate;
  const { renderMarkdown } = window.DeskmateMarkdown;

  const docId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
  const hash = new URLSearchParams(location.hash.slice(1));
  const cited = hash.get("section") || "";
  const citedChunk = hash.get("chunk") || "";

  // Which sections the answer cited: an article may repeat a heading ("Known problems › Solution" once per
  // problem), and the cited chunk says which — the section holding it, else the first of that name after it.
  function citedSections(sections) {
    const named = sections.filter((s) => cited && s.section === cited);
    const at = sections.findIndex((s) => citedChunk && (s.chunk_ids || []).includes(citedChunk));
    if (at < 0) return new Set(named);
    const after = named.find((s) => sections.indexOf(s) >= at);
    return new Set(after ? [after] : named);
  }

  function showError(text) {
    const box = document.getElementById("doc-error");
    box.textContent = text;
    box.hidden = false;
    document.getElementById("doc-title").textContent = "Document not available";
  }

  async function load() {
    let response;
    try {
      response = await fetch(`/documents/${encodeURIComponent(docId)}/sections`);
    } catch (_) {
      showError("deskmate cannot be reached; check that it is running and reload this page.");
      return;
    }
    if (!response.ok) { showError(await errorDetail(response)); return; }
    const doc = await response.json();
    document.title = `deskmate — ${doc.title}`;
    document.getElementById("doc-title").textContent = doc.title;
    document.getElementById("doc-source").textContent = doc.source;
    const download = document.getElementById("doc-download");
    download.href = doc.download;
    download.hidden = false;
    const article = document.getElementById("doc-sections");
    let target = null;
    const citedOnes = citedSections(doc.sections);
    for (const section of doc.sections) {
      const heading = section.section ? section.section.split(" > ").join(" › ") : "Introduction";
      const body = el("div", { class: "doc-section-body" });
      body.innerHTML = renderMarkdown(section.text); // escaped before any tag is made (markdown.js)
      const block = el("section", { class: "doc-section", dataset: { section: section.section } },
        el("h2", {}, heading), body);
      if (citedOnes.has(section)) {
        block.classList.add("cited");
        block.setAttribute("aria-current", "location");
        block.prepend(el("div", { class: "cited-note" }, "The answer cited this section"));
        target = target || block;
      }
      article.append(block);
    }
    if (target) target.scrollIntoView({ block: "start" });
  }

  load();
})();
