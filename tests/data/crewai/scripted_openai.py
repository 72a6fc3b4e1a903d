# Minimal scripted OpenAI-compatible server (chat.completions, non-streaming and streaming)
import json, sys, time, itertools
from http.server import BaseHTTPRequestHandler, HTTPServer
SCRIPT = json.load(open(sys.argv[2]))  # list of assistant messages (dicts) served in order, cycling per "conversation"
counter = itertools.count()
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.send_header("content-type","application/json"); self.end_headers()
        self.wfile.write(json.dumps({"object":"list","data":[{"id":"gpt-4o-mini","object":"model"}]}).encode())
    def do_POST(self):
        n = int(self.headers.get("content-length", 0)); body = json.loads(self.rfile.read(n) or b"{}")
        with open(sys.argv[3], "a") as f: f.write(json.dumps({"path": self.path, "body": body})+"\n")
        i = next(counter); msg = SCRIPT[min(i, len(SCRIPT)-1)]
        finish = "tool_calls" if msg.get("tool_calls") else "stop"
        resp = {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": int(time.time()), "model": body.get("model","gpt-4o-mini"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": msg.get("content"), **({"tool_calls": msg["tool_calls"]} if msg.get("tool_calls") else {})}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}
        if body.get("stream"):
            self.send_response(200); self.send_header("content-type","text/event-stream"); self.end_headers()
            delta = {"role":"assistant"}
            if msg.get("content"): delta["content"] = msg["content"]
            if msg.get("tool_calls"): delta["tool_calls"] = [dict(tc, index=k) for k, tc in enumerate(msg["tool_calls"])]
            ch = {"id": resp["id"], "object":"chat.completion.chunk","created":resp["created"],"model":resp["model"],"choices":[{"index":0,"delta":delta,"finish_reason":None}]}
            self.wfile.write(f"data: {json.dumps(ch)}\n\n".encode())
            ch2 = dict(ch, choices=[{"index":0,"delta":{},"finish_reason":finish}], usage=resp["usage"])
            self.wfile.write(f"data: {json.dumps(ch2)}\n\ndata: [DONE]\n\n".encode()); return
        self.send_response(200); self.send_header("content-type","application/json"); self.end_headers()
        self.wfile.write(json.dumps(resp).encode())
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
