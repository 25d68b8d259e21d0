"""Chat-platform front-ends (Slack; Teams next): a platform message in, one turn of the support graph through
`ChatService`, the reply rendered for the platform. `conversation` is the platform-neutral layer; each platform
module only speaks its protocol."""
