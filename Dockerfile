# deskmate image: the embedded defaults inside, everything else by environment.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    DESKMATE_HOST=0.0.0.0 DESKMATE_DATA_DIR=/data
WORKDIR /app
COPY pyproject.toml constraints.txt README.md ./
COPY app ./app
COPY core ./core
COPY graphs ./graphs
COPY nodes ./nodes
COPY prompts ./prompts
COPY kb ./kb
# CPU build of torch first, so nothing resolves a CUDA wheel
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install -c constraints.txt . \
 && python -c "import app; from app.adapters.encoders import build_embedder; build_embedder('onnx')"
# ^ the ONNX encoder exported at build time into the image's cache: a new /data copies it instead of exporting
# the package install puts app/ in site-packages; the bundled KB is read from /app/kb
ENV DESKMATE_KB_DIR=/app/kb
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=90s CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/ready', timeout=4).status == 200 else 1)"
CMD ["deskmate", "serve"]
