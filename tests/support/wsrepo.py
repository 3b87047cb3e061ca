"""Helpers for the workspace tests: a stand-in token counter and the app fixture (git: ``support.gitrepo``)."""

from __future__ import annotations


def count_tokens(text: str) -> int:
    """A deterministic stand-in tokenizer: about four characters a token."""
    return (len(text) + 3) // 4


APP_FILES = {
    "app/models.py": (
        "class User:\n"
        "    def __init__(self, name):\n"
        "        self.name = name\n\n"
        "    def greeting(self):\n"
        "        return format_name(self.name)\n\n\n"
        "def format_name(name):\n"
        "    return name.title()\n"
    ),
    "app/service.py": (
        "from app.models import User, format_name\n\n\n"
        "class UserService:\n"
        "    def create(self, name):\n"
        "        return User(name)\n\n"
        "    def describe(self, user):\n"
        "        return format_name(user.name)\n"
    ),
    "app/cli.py": (
        "from app.service import UserService\n\n\n"
        "def main():\n"
        "    service = UserService()\n"
        "    user = service.create('ada')\n"
        "    print(service.describe(user))\n"
    ),
    "web/client.ts": (
        "export interface Client { fetchUser(id: number): Promise<string>; }\n\n"
        "export class HttpClient implements Client {\n"
        "  async fetchUser(id: number): Promise<string> { return request(`/users/${id}`); }\n"
        "}\n\n"
        "export function request(url: string): Promise<string> { return fetch(url).then(r => r.text()); }\n"
    ),
    "web/app.js": (
        "import { HttpClient } from './client';\n"
        "function render(user) { return `<p>${user}</p>`; }\n"
        "const client = new HttpClient();\n"
        "client.fetchUser(1).then(render);\n"
    ),
    "native/store.go": (
        "package store\n\n"
        "type Store struct { items map[string]string }\n\n"
        "func NewStore() *Store { return &Store{items: map[string]string{}} }\n\n"
        "func (s *Store) Put(key, value string) { s.items[key] = value }\n"
    ),
    "README.md": "# demo\n",
    ".gitignore": "build/\n*.log\n",
}


