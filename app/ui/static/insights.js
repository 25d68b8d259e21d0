// Insights: the figures of GET /admin/insights drawn as charts and tables. Used by the admin page's Insights
// tab and, inlined, by the page `deskmate report` writes — so it needs nothing but Chart.js (window.Chart).
(function () {
  "use strict";

  const COLORS = { web: "#4f46e5", api: "#0891b2", cli: "#d97706", slack: "#15803d", teams: "#7c3aed" };
  const OUTCOME_COLORS = {
    answered: "#15803d", walkthrough_step: "#22c55e", resolved: "#065f46", abstained: "#9ca3af",
    ticket_offered: "#f59e0b", ticket_created: "#b91c1c", handoff: "#7c3aed", out_of_scope: "#6b7280",
    clarified: "#0891b2", conversation: "#cbd5e1",
  };

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([name, value]) => {
      if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
    });
    children.flat().forEach((child) => {
      if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
    });
    return node;
  }

  const percent = (share) => (share === null || share === undefined ? "–" : `${Math.round(share * 100)} %`);
  const pretty = (name) => name.replace(/_/g, " ");

  function tile(label, value, hint) {
    return el("div", { class: "insight-tile" }, el("div", { class: "insight-value" }, value),
      el("div", { class: "insight-label" }, label), hint ? el("div", { class: "muted" }, hint) : null);
  }

  function chartCard(title, id, note) {
    return el("div", { class: "card insight-chart" }, el("h3", {}, title),
      note ? el("p", { class: "muted" }, note) : null,
      el("div", { class: "chart-box" }, el("canvas", { id, role: "img", "aria-label": title })));
  }

  function table(headers, rows, empty) {
    if (!rows.length) return el("p", { class: "empty" }, empty);
    return el("table", { class: "data" }, el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => el("td", {}, c))))));
  }

  function channelsOf(rows) {
    return [...new Set(rows.map((r) => r.channel))].sort();
  }

  function stacked(rows, key, labels, channels) {
    return channels.map((channel) => ({
      label: channel,
      backgroundColor: COLORS[channel] || "#64748b",
      data: labels.map((label) => rows.filter((r) => r.channel === channel && String(r[key]) === String(label))
        .reduce((sum, r) => sum + r.turns, 0)),
    }));
  }

  function days(window) {
    const out = [];
    for (let d = new Date(`${window.from}T00:00:00Z`); d <= new Date(`${window.to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1)) {
      out.push(d.toISOString().slice(0, 10));
    }
    return out;
  }

  function draw(canvasId, config) {
    if (!window.Chart) return null;
    const canvas = document.getElementById(canvasId);
    const existing = window.Chart.getChart(canvas);
    if (existing) existing.destroy();
    config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options || {});
    return new window.Chart(canvas, config);
  }

  function saveFile(name, text, type) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = el("a", { href: url, download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  function slug(text) {
    return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "article";
  }

  function gapList(gaps) {
    if (!gaps.length) {
      return el("p", { class: "empty" }, "No knowledge gaps: no topic was left unanswered for 3 or more questions from 2 or more people.");
    }
    return el("ol", { class: "gap-list" }, gaps.map((gap) => el("li", { class: "gap" },
      el("div", { class: "gap-head" }, el("strong", {}, gap.label),
        el("span", { class: "badge" }, `${gap.size} questions`), el("span", { class: "badge" }, `${gap.askers} people`),
        el("span", { class: `badge trend-${gap.trend.direction}` }, `${gap.trend.direction} (${gap.trend.earlier} → ${gap.trend.later})`),
        el("button", { class: "button subtle draft-article", type: "button",
          onclick: () => saveFile(`${slug(gap.label)}.md`, gap.draft, "text/markdown") }, "Draft an article")),
      el("ul", { class: "examples" }, gap.examples.map((q) => el("li", {}, q))))));
  }

  // Render every figure into `root` (replacing what was there); returns the charts drawn.
  function render(root, figures) {
    const v = figures.volume, d = figures.deflection, t = figures.tickets, a = figures.articles;
    const windowText = `${figures.window.from} – ${figures.window.to}${figures.window.collection !== null && figures.window.collection !== undefined ? ` · collection ${figures.window.collection || "(default)"}` : ""}`;
    root.replaceChildren(
      el("p", { class: "muted insight-window" }, `${windowText} · ${v.turns} turns · UTC`),
      el("div", { class: "insight-tiles" },
        tile("conversations", String(d.conversations), "that asked something"),
        tile("deflection", percent(d.deflection_rate), `${d.deflected} ended answered, no ticket`),
        tile("resolved by the user", percent(d.resolved_by_user_rate), `${d.resolved_by_user} said it works or voted Helpful`),
        tile("tickets created", String(t.created), Object.entries(t.by_category).map(([k, n]) => `${n} ${k}`).join(", "))),
      el("div", { class: "insight-grid" },
        chartCard("Turns per day, by channel", "chart-days"),
        chartCard("Turns per hour of day (UTC), by channel", "chart-hours"),
        chartCard("What each turn did", "chart-outcomes"),
        chartCard("Tickets by priority", "chart-tickets")),
      el("div", { class: "card" }, el("h3", {}, "Knowledge gaps"),
        el("p", { class: "muted" }, "Unanswered or Not-helpful questions, grouped by meaning; a topic shows once 3 questions from 2 people ask it."),
        gapList(figures.knowledge_gaps)),
      el("div", { class: "insight-grid" },
        chartCard("Most cited articles", "chart-cited"),
        el("div", { class: "card" }, el("h3", {}, "Helpful / Not helpful by article"),
          table(["Article", "Helpful", "Not helpful"], a.votes_by_article.map((r) => [r.title, r.helpful, r.not_helpful]), "No votes in this window."))),
      el("div", { class: "card" }, el("h3", {}, "Helpful / Not helpful by section"),
        table(["Article › section", "Helpful", "Not helpful"],
          a.votes_by_section.map((r) => [r.section ? `${r.title} › ${r.section}` : r.title, r.helpful, r.not_helpful]), "No votes in this window.")),
      el("div", { class: "card" }, el("h3", {}, "Walkthroughs that end in a ticket"),
        table(["Article", "Walkthroughs", "Ended in a ticket", "Share"],
          a.walkthroughs_ending_in_ticket.map((r) => [r.title, r.walkthroughs, r.ended_in_ticket, percent(r.rate)]), "None in this window.")),
      a.never_cited ? el("div", { class: "card" }, el("h3", {}, `Never cited in this window (${a.never_cited.length})`),
        a.never_cited.length ? el("ul", { class: "never-cited" }, a.never_cited.map((r) => el("li", {}, r.title))) :
          el("p", { class: "empty" }, "Every article was cited.")) : null,
    );
    const dayLabels = days(figures.window);
    const hourLabels = Array.from({ length: 24 }, (_, h) => h);
    const stackedBars = { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } };
    const outcomes = Object.entries(v.by_outcome).filter(([, n]) => n);
    const priorities = Object.entries(t.by_priority);
    return [
      draw("chart-days", { type: "bar", data: { labels: dayLabels.map((x) => x.slice(5)),
        datasets: stacked(v.by_day, "day", dayLabels, channelsOf(v.by_day)) }, options: stackedBars }),
      draw("chart-hours", { type: "bar", data: { labels: hourLabels,
        datasets: stacked(v.by_hour, "hour", hourLabels, channelsOf(v.by_hour)) }, options: stackedBars }),
      draw("chart-outcomes", { type: "doughnut", data: { labels: outcomes.map(([k]) => pretty(k)),
        datasets: [{ data: outcomes.map(([, n]) => n), backgroundColor: outcomes.map(([k]) => OUTCOME_COLORS[k]) }] },
        options: { plugins: { legend: { position: "right" } } } }),
      draw("chart-tickets", { type: "bar", data: { labels: priorities.map(([k]) => k),
        datasets: [{ label: "tickets", data: priorities.map(([, n]) => n), backgroundColor: "#b91c1c" }] },
        options: { plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } } }),
      draw("chart-cited", { type: "bar", data: { labels: a.most_cited.map((r) => r.title),
        datasets: [{ label: "citations", data: a.most_cited.map((r) => r.citations), backgroundColor: "#4f46e5" }] },
        options: { indexAxis: "y", plugins: { legend: { display: false } }, scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } } }),
    ].filter(Boolean);
  }

  window.DeskmateInsights = { render, saveFile };
})();
