"""One conversation through POST /chat, as the web UI holds it: each reply's session continues the next turn."""


class Chat:
    def __init__(self, client):
        self.client, self.session = client, None

    def say(self, message, **extra):
        body = {"message": message, **extra} | ({"session_id": self.session} if self.session else {})
        response = self.client.post("/chat", json=body)
        assert response.status_code == 200, response.text
        reply = response.json()
        self.session = reply["session_id"]
        return reply
