"""A small real HTTP server on 127.0.0.1 speaking the parts of Jira's REST API v2 that deskmate uses.

- POST /rest/api/2/issue                      create (validates project, summary, type, priority, labels)
- GET  /rest/api/2/search?jql=…               Server/Data Center search (Cloud mode: 410 Gone, as Jira Cloud now)
- GET  /rest/api/2/search/jql?jql=…           Cloud's search (Server mode: 404, as on Data Center)
- GET  /rest/api/2/issue/{key}/transitions    the workflow To Do → In Progress → Done (→ Reopen)
- POST /rest/api/2/issue/{key}/transitions    move the issue; optionally insists on a resolution
- POST /rest/api/2/issue/{key}/comment        add a comment

Issues live in memory (keys IT-1, IT-2, …). Every request is checked for the expected Authorization
header (Bearer PAT, or Basic email:token in Cloud mode) and recorded. `fail_next(status, retry_after=…)`
scripts the next answers (401, 429 with Retry-After, 500 …) before any routing happens.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.e2e.servers import _Handler, _Server

CATEGORIES = {"To Do": ("new", "To Do"), "In Progress": ("indeterminate", "In Progress"), "Done": ("done", "Done")}
WORKFLOW = {  # listed with a non-done transition first, so "take the first one" would be wrong
    "To Do": [("11", "Start Progress", "In Progress"), ("31", "Done", "Done")],
    "In Progress": [("21", "Stop Progress", "To Do"), ("31", "Done", "Done")],
    "Done": [("41", "Reopen", "To Do")],
}
_ISSUE_PATH = re.compile(r"^/rest/api/2/issue/([A-Z][A-Z0-9_]*-[0-9]+)/(transitions|comment)$")
_CLAUSES = [
    ("project", re.compile(r'^project\s*=\s*"?([A-Z][A-Z0-9_]*)"?$', re.IGNORECASE)),
    ("labels", re.compile(r'^labels\s*=\s*"?([^"\s]+)"?$', re.IGNORECASE)),
    ("key_in", re.compile(r"^key\s+in\s*\(([^)]*)\)$", re.IGNORECASE)),
    ("key", re.compile(r'^key\s*=\s*"?([A-Z][A-Z0-9_]*-[0-9]+)"?$', re.IGNORECASE)),
]


class JiraServer(_Server):
    def __init__(
        self,
        *,
        project: str = "IT",
        token: str = "jira-test-token",
        email: str | None = None,
        cloud: bool = False,
        resolution_required: bool = False,
        delay_s: float = 0.0,
        priorities: tuple[str, ...] = ("Lowest", "Low", "Medium", "High", "Highest"),
        issue_types: tuple[str, ...] = ("Task", "Bug", "IT Help"),
    ) -> None:
        self.project = project
        self.token = token
        self.email = email
        self.cloud = cloud
        self.resolution_required = resolution_required
        self.delay_s = delay_s
        self.priorities = priorities
        self.issue_types = issue_types
        self.issues: dict[str, dict[str, Any]] = {}
        self._failures: list[tuple[int, dict[str, str]]] = []
        self._lock = threading.Lock()
        super().__init__(_JiraHandler)

    # --- scripting ------------------------------------------------------------------------
    def fail_next(self, status: int, *, retry_after: str | None = None, times: int = 1) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        with self._lock:
            self._failures.extend([(status, headers)] * times)

    def set_status(self, key: str, status: str) -> None:
        """What IT does in Jira's UI: move the issue to another status."""
        assert status in CATEGORIES
        self.issues[key]["status"] = status

    def calls(self, method: str, path_prefix: str) -> list[dict]:
        return [r for r in self.requests if r["method"] == method and r["path"].startswith(path_prefix)]

    # --- behaviour ------------------------------------------------------------------------
    def expected_authorization(self) -> str:
        if self.email:
            return "Basic " + base64.b64encode(f"{self.email}:{self.token}".encode()).decode()
        return f"Bearer {self.token}"

    def next_failure(self) -> tuple[int, dict[str, str]] | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    def create(self, fields: dict) -> tuple[int, dict]:
        errors = {}
        if (fields.get("project") or {}).get("key") != self.project:
            errors["project"] = "valid project is required"
        summary = fields.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            errors["summary"] = "You must specify a summary of the issue."
        elif len(summary) > 255 or "\n" in summary:
            errors["summary"] = "Summary must be less than 255 characters and on one line."
        if (fields.get("issuetype") or {}).get("name") not in self.issue_types:
            errors["issuetype"] = "Specify an issue type"
        if "priority" in fields and (fields["priority"] or {}).get("name") not in self.priorities:
            errors["priority"] = "Specify the Priority (name) in the string format"
        labels = fields.get("labels", [])
        if not isinstance(labels, list) or any(not isinstance(label, str) or " " in label for label in labels):
            errors["labels"] = "Labels cannot contain spaces."
        description = fields.get("description", "")
        if not isinstance(description, str) or len(description) > 32767:
            errors["description"] = "Description is too long or not text."
        if errors:
            return 400, {"errorMessages": [], "errors": errors}
        with self._lock:
            number = len(self.issues) + 1
            key = f"{self.project}-{number}"
            self.issues[key] = {
                "id": str(10000 + number),
                "key": key,
                "number": number,
                "summary": summary,
                "description": description,
                "labels": labels,
                "priority": (fields.get("priority") or {}).get("name"),
                "issuetype": fields["issuetype"]["name"],
                "status": "To Do",
                "comments": [],
                "resolution": None,
            }
        return 201, {"id": str(10000 + number), "key": key, "self": f"{self.url}/rest/api/2/issue/{10000 + number}"}

    def search(self, jql: str, max_results: int) -> tuple[int, dict]:
        order_desc = bool(re.search(r"order\s+by\s+created\s+desc", jql, re.IGNORECASE))
        where = re.split(r"\s+order\s+by\s+", jql, flags=re.IGNORECASE)[0].strip()
        matches = list(self.issues.values())
        for clause in (c.strip() for c in re.split(r"\s+AND\s+", where, flags=re.IGNORECASE) if c.strip()):
            for kind, pattern in _CLAUSES:  # noqa: B007 (the matching clause's kind is read after the loop)
                found = pattern.match(clause)
                if found:
                    break
            else:
                return 400, {"errorMessages": [f"Error in the JQL Query: cannot parse '{clause}'."], "errors": {}}
            value = found.group(1)
            if kind == "project":
                matches = [i for i in matches if i["key"].split("-")[0] == value.upper()]
            elif kind == "labels":
                matches = [i for i in matches if value in i["labels"]]
            elif kind == "key":
                matches = [i for i in matches if i["key"] == value.upper()]
            else:
                keys = {k.strip().strip('"').upper() for k in value.split(",") if k.strip()}
                matches = [i for i in matches if i["key"] in keys]
        matches.sort(key=lambda i: i["number"], reverse=order_desc)
        shown = matches[:max_results]
        issues = [
            {
                "id": i["id"],
                "key": i["key"],
                "self": f"{self.url}/rest/api/2/issue/{i['id']}",
                "fields": {"summary": i["summary"], "status": _status(i["status"])},
            }
            for i in shown
        ]
        if self.cloud:
            return 200, {"issues": issues, "isLast": True}
        return 200, {"startAt": 0, "maxResults": max_results, "total": len(matches), "issues": issues}

    def transitions(self, key: str) -> list[dict]:
        listed = []
        for tid, name, target in WORKFLOW[self.issues[key]["status"]]:
            transition: dict[str, Any] = {
                "id": tid,
                "name": name,
                "to": {"name": target, **_status(target)},
                "fields": {},
            }
            if target == "Done" and self.resolution_required:
                transition["fields"]["resolution"] = {"required": True, "name": "Resolution"}
            listed.append(transition)
        return listed

    def transition(self, key: str, body: dict) -> tuple[int, dict]:
        tid = str((body.get("transition") or {}).get("id"))
        chosen = next((t for t in WORKFLOW[self.issues[key]["status"]] if t[0] == tid), None)
        if chosen is None:
            return 400, {"errorMessages": [f"Transition id '{tid}' is not valid for this issue."], "errors": {}}
        resolution = ((body.get("fields") or {}).get("resolution") or {}).get("name")
        if chosen[2] == "Done" and self.resolution_required and not resolution:
            return 400, {"errorMessages": [], "errors": {"resolution": "Resolution is required."}}
        self.issues[key]["status"] = chosen[2]
        self.issues[key]["resolution"] = resolution
        return 204, {}


def _status(name: str) -> dict:
    key, label = CATEGORIES[name]
    return {"name": name, "statusCategory": {"key": key, "name": label}}


class _JiraHandler(_Handler):
    def _reply(self, status: int, payload: dict | None = None, headers: dict[str, str] | None = None) -> None:
        data = b"" if status == 204 else json.dumps(payload or {}).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 204:
            self.send_header("content-type", "application/json;charset=UTF-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        server: JiraServer = self.owner
        raw = self._body()
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        server.requests.append(
            {
                "method": self.command,
                "path": url.path,
                "query": query,
                "body": body,
                "headers": {k.lower(): v for k, v in self.headers.items()},
            }
        )
        if server.delay_s:
            time.sleep(server.delay_s)
        failure = server.next_failure()
        if failure:
            status, headers = failure
            self._reply(status, {"errorMessages": [f"scripted {status}"], "errors": {}}, headers)
            return
        if self.headers.get("authorization") != server.expected_authorization():
            self._reply(
                401,
                {
                    "errorMessages": ["You are not authenticated. Authentication required to perform this operation."],
                    "errors": {},
                },
            )
            return
        if body is None:
            self._reply(400, {"errorMessages": ["Unexpected character: the body is not JSON."], "errors": {}})
            return
        self._route(server, url.path, query, body)

    def _route(self, server: JiraServer, path: str, query: dict, body: dict) -> None:
        if self.command == "POST" and path == "/rest/api/2/issue":
            self._reply(*server.create(body.get("fields") or {}))
            return
        if self.command == "GET" and path in ("/rest/api/2/search", "/rest/api/2/search/jql"):
            if server.cloud and path == "/rest/api/2/search":
                self._reply(
                    410,
                    {
                        "errorMessages": [
                            "The requested API has been removed. Please migrate to the /rest/api/3/search/jql API."
                        ],
                        "errors": {},
                    },
                )
            elif not server.cloud and path.endswith("/jql"):
                self._reply(404, {"errorMessages": ["null for uri: " + path], "errors": {}})
            else:
                self._reply(*server.search(query.get("jql", ""), int(query.get("maxResults", "50"))))
            return
        match = _ISSUE_PATH.match(path)
        if not match or self.command not in ("GET", "POST"):
            self._reply(404, {"errorMessages": [f"No endpoint {self.command} {path}."], "errors": {}})
            return
        key, what = match.groups()
        if key not in server.issues:
            self._reply(
                404, {"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}}
            )
        elif what == "transitions" and self.command == "GET":
            self._reply(200, {"expand": "transitions", "transitions": server.transitions(key)})
        elif what == "transitions":
            self._reply(*server.transition(key, body))
        elif self.command == "POST" and isinstance(body.get("body"), str) and body["body"].strip():
            server.issues[key]["comments"].append(body["body"])
            self._reply(201, {"id": str(len(server.issues[key]["comments"])), "body": body["body"]})
        else:
            self._reply(400, {"errorMessages": [], "errors": {"comment": "Comment body can not be empty!"}})

    do_GET = do_POST = do_PUT = do_DELETE = _handle  # noqa: N815
