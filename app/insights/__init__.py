"""Insights for the IT team: an outcome record per chat turn (`outcomes`), the figures counted from it in SQL
(`figures`), the knowledge gaps clustered by meaning (`gaps`), and the page and CSV they are shown as
(`report`)."""
