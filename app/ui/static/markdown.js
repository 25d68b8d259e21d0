// A small Markdown renderer for deskmate's answers, safe by construction: the whole text is
// HTML-escaped FIRST, and only then are the few Markdown forms answers use (headings, numbered and
// bulleted lists, code, bold, italics, links, [n] citations) turned into tags this file writes itself.
// Nothing from an answer or a document can become markup, an attribute or a script. Links are only
// http(s) or same-site paths, and open in a new tab without a referrer.
(function () {
  "use strict";

  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  }

  const SAFE_URL = /^(https?:\/\/[^\s]+|\/(?!\/)[^\s]*)$/i;

  function link(url, label) {
    // `url` and `label` are already escaped; the scheme check keeps javascript: and data: out
    if (!SAFE_URL.test(url)) return label;
    return `<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`;
  }

  function inline(text, options) {
    const codes = [];
    let out = text.replace(/`([^`\n]+)`/g, (_, code) => {
      codes.push(code);
      return `\u0000${codes.length - 1}\u0000`;
    });
    out = out.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_, label, url) => link(url, label));
    out = out.replace(/(^|[\s(])(https?:\/\/[^\s<)]+[^\s<).,;:!?])/g, (_, before, url) => before + link(url, url));
    out = out.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
    out = out.replace(/(^|[^*\w])\*([^*\n]+)\*(?![\w*])/g, "$1<em>$2</em>");
    out = out.replace(/(^|[\s(])_([^_\n]+)_(?![\w])/g, "$1<em>$2</em>");
    if (options.cite) {
      out = out.replace(/\[(\d{1,2})\](?![(\w])/g, (whole, n) => options.cite(Number(n)) || whole);
    }
    return out.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${codes[Number(i)]}</code>`);
  }

  const ORDERED = /^\s*(\d{1,3})[.)]\s+(.*)$/;
  const BULLET = /^\s*[-*•]\s+(.*)$/;
  const HEADING = /^(#{1,6})\s+(.*)$/;
  const FENCE = /^\s*```/;
  const QUOTE = /^&gt;\s?(.*)$/;

  function startsBlock(line) {
    return ORDERED.test(line) || BULLET.test(line) || HEADING.test(line) || FENCE.test(line) || QUOTE.test(line);
  }

  /** Markdown → HTML string. options.cite(n) may return the HTML for citation [n] (or null to leave it). */
  function renderMarkdown(source, options) {
    options = options || {};
    const lines = escapeHtml(String(source || "").replace(/\r\n?/g, "\n")).split("\n");
    const html = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) { i += 1; continue; }
      if (FENCE.test(line)) {
        const code = [];
        i += 1;
        while (i < lines.length && !FENCE.test(lines[i])) code.push(lines[i++]);
        i += 1;
        html.push(`<pre><code>${code.join("\n")}</code></pre>`);
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        const level = Math.min(6, heading[1].length + 2); // answers live inside a page: h3 and smaller
        html.push(`<h${level}>${inline(heading[2], options)}</h${level}>`);
        i += 1;
        continue;
      }
      if (ORDERED.test(line) || BULLET.test(line)) {
        const ordered = ORDERED.test(line);
        const pattern = ordered ? ORDERED : BULLET;
        const items = [];
        const start = ordered ? Number(ORDERED.exec(line)[1]) : 1;
        while (i < lines.length && pattern.test(lines[i])) {
          const match = pattern.exec(lines[i]);
          let item = ordered ? match[2] : match[1];
          i += 1;
          // indented continuation lines belong to the item
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !startsBlock(lines[i])) item += " " + lines[i++].trim();
          items.push(`<li>${inline(item, options)}</li>`);
        }
        const tag = ordered ? "ol" : "ul";
        html.push(`<${tag}${ordered && start !== 1 ? ` start="${start}"` : ""}>${items.join("")}</${tag}>`);
        continue;
      }
      if (QUOTE.test(line)) {
        const quoted = [];
        while (i < lines.length && QUOTE.test(lines[i])) quoted.push(inline(QUOTE.exec(lines[i++])[1], options));
        html.push(`<blockquote>${quoted.join("<br>")}</blockquote>`);
        continue;
      }
      const paragraph = [];
      while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) paragraph.push(inline(lines[i++], options));
      html.push(`<p>${paragraph.join("<br>")}</p>`);
    }
    return html.join("");
  }

  window.DeskmateMarkdown = { renderMarkdown, escapeHtml };
})();
