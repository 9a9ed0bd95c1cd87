"""Uploads never touch the disk (issue 26 item 3): the web server's multipart parser keeps files in memory.

Streamlit's upload route hands the request to Starlette's ``MultiPartParser``, which spooled any file over 1 MB
to an unnamed temporary file. ``ui.common.keep_uploads_in_memory`` (called by every page's ``page_setup``) raises
the spool limit above the largest upload Streamlit accepts. The oracle is Starlette's own parser on a real
multipart body: a file just under the upload limit must come out of it still in memory (not rolled over).
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import streamlit as st
from starlette.datastructures import Headers
from starlette.formparsers import MultiPartParser

from tests.attack.pages import run_page
from ui.common import keep_uploads_in_memory

BOUNDARY = "dpdashboundary"


def _parse(payload: bytes):
    body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + payload + f"\r\n--{BOUNDARY}--\r\n".encode()

    async def stream():
        for i in range(0, len(body), 1 << 16):
            yield body[i:i + (1 << 16)]

    parser = MultiPartParser(Headers({"content-type": f"multipart/form-data; boundary={BOUNDARY}"}), stream(),
                             max_part_size=len(body))
    # in a thread of its own: a pytest worker that ran browser tests has Playwright's event loop in this thread
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, parser.parse()).result()["file"]


def test_an_upload_at_the_limit_stays_in_memory():
    keep_uploads_in_memory()
    limit = int(st.get_option("server.maxUploadSize")) * 1024 * 1024
    payload = b"x,y\n" + b"1,2\n" * ((limit - 8) // 4)
    upload = _parse(payload)
    try:
        assert not upload.file._rolled, "the upload was spooled to a file on disk"
        upload.file.seek(0)
        assert upload.file.read() == payload
    finally:
        upload.file.close()


def test_without_the_setting_starlette_spools_to_disk():
    """The check above can fail: Starlette's default spools a 2 MB file."""
    saved = MultiPartParser.spool_max_size
    MultiPartParser.spool_max_size = 1024 * 1024
    try:
        upload = _parse(b"1,2\n" * 500_000)
        assert upload.file._rolled
        upload.file.close()
    finally:
        MultiPartParser.spool_max_size = saved


def test_every_page_sets_it_up():
    MultiPartParser.spool_max_size = 1024 * 1024
    run_page("app.py")
    assert MultiPartParser.spool_max_size > int(st.get_option("server.maxUploadSize")) * 1024 * 1024
